import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { SlotLedger } from '../../src/tasks/slot-ledger.js';

/** A decision that settles when the test says (resolve), as RunSupervisor hands one to a paused run. */
function decision() {
  let resolve!: (approved: boolean) => void;
  const decided = new Promise<boolean>((r) => (resolve = r));
  return { decided, resolve };
}

describe('SlotLedger: paused runs per organization (AGENTRY_MAX_PAUSED_RUNS_PER_ORG)', () => {
  const ledger = (maxPausedRunsPerOrg: number) => {
    const released: number[] = [];
    const slots = new SlotLedger({ concurrency: 2, maxPausedRuns: 3, maxPausedRunsPerOrg, slotFreed: () => {}, organizationReleased: () => released.push(1) });
    return { slots, released };
  };

  it('holds an organization back at its bound, lent or held, and releases it on the first decision (or stop) below it', async () => {
    const { slots, released } = ledger(2);
    const runs = Array.from({ length: 4 }, () => decision());
    const parked = runs.map((d) => slots.parkForApproval('org-a', d.decided));
    expect(slots.heldBack()).toEqual(['org-a']);
    expect(slots.holdsBack('org-a')).toBe(true);
    expect(slots.holdsBack('org-b')).toBe(false);
    // Three of the four lend their slot (AGENTRY_MAX_PAUSED_RUNS); all four count.
    expect(slots.pausedLending).toBe(3);
    runs[0]!.resolve(true);
    await parked[0];
    expect(slots.heldBack()).toEqual(['org-a']);
    expect(released).toEqual([]);
    runs[1]!.resolve(true);
    await parked[1];
    expect(slots.heldBack()).toEqual(['org-a']);
    // A stop resolves the decision as a rejection (abortExecution): the same for the count. One paused run is left.
    runs[2]!.resolve(false);
    await parked[2];
    expect(slots.heldBack()).toEqual([]);
    expect(released).toEqual([1]);
    // Back at the bound with a new pause; released again by the next decision.
    const next = decision();
    const again = slots.parkForApproval('org-a', next.decided);
    expect(slots.heldBack()).toEqual(['org-a']);
    runs[3]!.resolve(true);
    await parked[3];
    expect(slots.heldBack()).toEqual([]);
    expect(released).toEqual([1, 1]);
    next.resolve(true);
    await again;
    expect(slots.pausedLending).toBe(0);
  });

  it('counts each organization on its own; 0 holds nobody back', async () => {
    const { slots } = ledger(1);
    const a = decision();
    const b = decision();
    const parked = [slots.parkForApproval('org-a', a.decided), slots.parkForApproval('org-b', b.decided)];
    expect([...slots.heldBack()].sort()).toEqual(['org-a', 'org-b']);
    a.resolve(true);
    await parked[0];
    expect(slots.heldBack()).toEqual(['org-b']);
    b.resolve(true);
    await parked[1];

    const off = ledger(0).slots;
    const c = decision();
    const p = off.parkForApproval('org-a', c.decided);
    expect(off.heldBack()).toEqual([]);
    c.resolve(true);
    await p;
  });
});

describe('AGENTRY_MAX_PAUSED_RUNS_PER_ORG', () => {
  const base = { AGENTRY_DATA_DIR: '/tmp/unused' };
  it('is a quarter of AGENTRY_MAX_PAUSED_RUNS (rounded up) unless set; 0 turns it off; nonsense is refused', () => {
    expect(loadConfig(base).worker.maxPausedRunsPerOrg).toBe(50);
    expect(loadConfig({ ...base, AGENTRY_MAX_PAUSED_RUNS: '10' }).worker.maxPausedRunsPerOrg).toBe(3);
    expect(loadConfig({ ...base, AGENTRY_MAX_PAUSED_RUNS: '0' }).worker.maxPausedRunsPerOrg).toBe(0);
    expect(loadConfig({ ...base, AGENTRY_MAX_PAUSED_RUNS_PER_ORG: '7' }).worker.maxPausedRunsPerOrg).toBe(7);
    expect(loadConfig({ ...base, AGENTRY_MAX_PAUSED_RUNS_PER_ORG: '0' }).worker.maxPausedRunsPerOrg).toBe(0);
    for (const bad of ['-1', '2.5', 'many', '100001']) expect(() => loadConfig({ ...base, AGENTRY_MAX_PAUSED_RUNS_PER_ORG: bad })).toThrow(/AGENTRY_MAX_PAUSED_RUNS_PER_ORG/);
  });
});
