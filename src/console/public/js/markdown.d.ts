// Types for the console's browser modules, so TypeScript tests can import them (not served to browsers).
export function escapeHtml(s: unknown): string;
export function safeUrl(raw: unknown): string | null;
export function renderInline(text: string): string;
export function renderMarkdown(source: string | null | undefined): string;
