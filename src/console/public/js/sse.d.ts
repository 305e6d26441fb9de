// Types for the console's browser modules, so TypeScript tests can import them (not served to browsers).
export interface SseEvent {
  id: string | null;
  event: string;
  data: string;
}
export class SseParser {
  constructor(onEvent: (e: SseEvent) => void);
  lastEventId: string | null;
  retry: number | null;
  push(text: string): void;
}
