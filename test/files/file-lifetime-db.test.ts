import type { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { attributeUploads } from '../../src/db/migrations/0027_file_lifetime.js';
import { uploadsQuery } from '../../src/files/file-lifetime.repository.js';
import { TEST_DBS } from '../support/databases.js';
import { openMigratedDb } from '../support/migrated-db.js';
import { queryPlan } from '../support/query-plan.js';
import { pendingTaskRow } from '../support/task-row.js';

const NOW = Date.UTC(2026, 10, 1, 12);

describe.each(TEST_DBS)("files' lifetime in the database: uploads attributed by migration 0027, index plans (%s)", (kind) => {
  let db: Db;
  let close: () => Promise<void>;
  beforeEach(async () => {
    ({ db, close } = await openMigratedDb(kind));
  });
  afterEach(() => close());

  const k = () => db.kysely as unknown as Kysely<any>;
  const addTask = (org: string, id: string, files: unknown) =>
    k().insertInto('tasks').values({ ...pendingTaskRow(id, NOW), organization_id: org, input_files: typeof files === 'string' ? files : JSON.stringify(files) }).execute();
  const addFile = (org: string, id: string, taskId: string | null = null) =>
    k()
      .insertInto('files')
      .values({ id, organization_id: org, name: `${id}.txt`, kind: 'txt', mime_type: 'text/plain', size: 1, sha256: 'x', blob_key: `${org}/${id}`, text: null, created_at: NOW, task_id: taskId })
      .execute();

  it("gives each upload named in a task's input_files that task, and leaves the others alone", async () => {
    for (const org of ['org-a', 'org-b']) await k().insertInto('organizations').values({ id: org, name: org, created_at: NOW }).execute();
    // Five tasks with files, read two at a time: the pages must join up.
    for (const i of [1, 2, 3, 4, 5]) {
      await addFile('org-a', `f${i}`);
      await addTask('org-a', `t${i}`, [{ id: `f${i}`, name: 'a', url: 'u' }, { id: 'given-by-url', name: 'b', url: 'https://x/b.pdf' }]);
    }
    await addTask('org-a', 't-none', []);
    await addTask('org-a', 't-garbled', 'not json');
    // Another organization's task naming org A's file does not take it.
    await addTask('org-b', 't-b', [{ id: 'f-doc' }]);
    await addFile('org-a', 'f-doc');
    // Already attributed: kept.
    await addFile('org-a', 'f-mine', 'someone');
    await addTask('org-a', 't-claims', [{ id: 'f-mine' }]);

    await attributeUploads(k(), 2);

    const rows = await k().selectFrom('files').select(['id', 'task_id']).orderBy('id').execute();
    expect(rows).toEqual([
      { id: 'f-doc', task_id: null },
      { id: 'f-mine', task_id: 'someone' },
      { id: 'f1', task_id: 't1' },
      { id: 'f2', task_id: 't2' },
      { id: 'f3', task_id: 't3' },
      { id: 'f4', task_id: 't4' },
      { id: 'f5', task_id: 't5' },
    ]);
  });

  it("finds a task's uploads through files_task_idx (deleteTaskRecords, on every deleted task)", async () => {
    const q = k().selectFrom('files').select(['id', 'blob_key']).where('organization_id', '=', 'org-a').where('task_id', 'in', ['t1', 't2']).compile();
    expect(await queryPlan(db, kind, q)).toContain('files_task_idx');
  });

  it("reads the orphan sweep's range of uploads from files_org_idx and looks each task or document up by its primary key", async () => {
    const p = await queryPlan(db, kind, uploadsQuery(db.kysely, 'org-a', 0, NOW, { id: 'x', created_at: 1 }, 100).compile());
    expect(p).toContain('files_org_idx');
    if (kind === 'sqlite') {
      expect(p).toMatch(/SEARCH files USING INDEX files_org_idx \(organization_id=\? AND created_at>\? AND created_at<\?\)/);
      expect(p).toMatch(/SEARCH tasks USING (COVERING )?INDEX sqlite_autoindex_tasks_1 \(organization_id=\? AND id=\?\)/);
      expect(p).toMatch(/SEARCH kb_documents USING (COVERING )?INDEX sqlite_autoindex_kb_documents_1 \(id=\?\)/);
    } else {
      // On empty tables PostgreSQL's choice among the indexes of `tasks` and `kb_documents` is a coin toss; none is a
      // scan of either.
      expect(p).not.toMatch(/Seq Scan/);
      expect(p).toMatch(/Index Cond: \(\(organization_id = 'org-a'::text\) AND \(created_at >= /);
      expect(p).toMatch(/Index (Only )?Scan using \S+ on tasks/);
      expect(p).toMatch(/Index (Only )?Scan using \S+ on kb_documents/);
    }
  });
});
