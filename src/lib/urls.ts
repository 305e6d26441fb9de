/**
 * Public base addresses. They are known only after the listeners bind when a port is 0,
 * so they live in one mutable holder set by the server, not in the frozen Config.
 */
export class PublicUrls {
  api = 'http://localhost:8080';
  webhook = 'http://localhost:8081';
}
