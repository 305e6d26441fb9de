/**
 * The guard detectors on a worker thread, for texts too large to scan on the event loop (guard-scanner.ts): the PII
 * detectors and the prompt-injection heuristics, the very functions the inline path calls. The parent bounds each
 * job with a deadline and terminates this thread when it passes (thread-pool.ts).
 */
import { serveThread } from '../lib/thread-serve.js';
import type { GuardScanReply, GuardScanRequest } from './guard-scanner.js';
import { detectInjection } from './injection/injection-detector.js';
import { detectPii } from './pii/pii-detectors.js';
import { groupPii } from './pii/pii-found.js';

function scan(req: GuardScanRequest): GuardScanReply {
  if (req.op === 'pii') return { op: 'pii', found: groupPii(detectPii(req.text, { defaultRegion: req.region })) };
  return { op: 'injection', verdict: detectInjection(req.text) };
}

// libphonenumber's metadata is read and the regexes compiled before the thread says it is ready: the jobs'
// deadlines start then.
scan({ op: 'pii', text: 'warm up: ada@example.com +1 415-555-2671', region: 'US' });
scan({ op: 'injection', text: 'warm up' });
serveThread(scan);
