/** Not built yet (issue 11). */
export function AdminAnnouncements() {
  return <h1>Announcements</h1>;
}
