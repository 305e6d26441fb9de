import type { Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { Config } from '../config.js';

/**
 * OpenTelemetry export: built only when an OTLP endpoint is configured, so a server without one creates no span
 * object at all. Spans leave in batches (BatchSpanProcessor: every second or 512 spans, a queue of 2,048 that drops
 * the overflow rather than grow) over OTLP/HTTP with JSON bodies; an unreachable collector costs failed exports in
 * the background, never a request or a run.
 *
 * The provider is not registered globally and no context manager is installed: the run observer parents its spans
 * explicitly (AsyncLocalStorage would turn on promise hooks for the whole process, see decisions "Runtime").
 *
 * The endpoint is the operator's (like DATABASE_URL or the S3 endpoint), not a tenant's, so it is not subject to
 * the egress policy that guards tenant-supplied URLs.
 */
export interface Tracing {
  tracer: Tracer;
  /** Whether spans carry the LLM input and output messages (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT). */
  captureContent: boolean;
  /** Exports what is buffered, then stops. */
  shutdown(): Promise<void>;
}

export function createTracing(otel: NonNullable<Config['otel']>): Tracing {
  const exporter = new OTLPTraceExporter({ url: otel.tracesUrl, headers: otel.headers, timeoutMillis: 10_000 });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': otel.serviceName }),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: 1000, maxExportBatchSize: 512, maxQueueSize: 2048 })],
  });
  return {
    tracer: provider.getTracer('agentry'),
    captureContent: otel.captureContent,
    shutdown: () => provider.shutdown(),
  };
}
