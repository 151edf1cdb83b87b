/** Names a site may hold that a page must show as text and never act on as markup, a link or a script. */
export const HOSTILE_NAMES = [
  '<img src=x onerror=alert(1)>',
  '</script><script>alert(2)</script>',
  'javascript:alert(3)',
  '"><svg onload=alert(4)>',
  "'><iframe src=javascript:alert(5)></iframe>",
  '\u202Egnp.exe',
  `long-${'x'.repeat(50_000)}`,
] as const;
