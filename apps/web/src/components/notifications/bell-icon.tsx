/**
 * The Notifications tab's bell (an inline SVG in the text colour, hidden from assistive technology:
 * the link's name is its visually hidden text). The header has no room for another word at 1280 px.
 */
export function BellIcon() {
  return (
    <svg
      aria-hidden="true"
      focusable="false"
      width="17"
      height="17"
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth="2"
      strokeLinecap="round"
      strokeLinejoin="round"
      style={{ verticalAlign: "-3px" }}
    >
      <path d="M6 8a6 6 0 0 1 12 0c0 7 3 9 3 9H3s3-2 3-9" />
      <path d="M10.3 21a1.94 1.94 0 0 0 3.4 0" />
    </svg>
  );
}
