import { Role, TaskState, type Artifact, type StreamResponse, type Task as A2aTask } from '@a2a-js/sdk';
import type { Task, TaskEvent } from '../../tasks/task.types.js';
import { message, textPart } from '../a2a-messages.js';

/** Our tasks as A2A tasks: the A2A task id and context id are the Agentry task id (a context is one conversation). */

const STATES: Record<Task['status'], TaskState> = {
  pending: TaskState.TASK_STATE_SUBMITTED,
  executing: TaskState.TASK_STATE_WORKING,
  // Waiting for a person's approval (supervised agents): still working, as far as the caller can act on it.
  paused: TaskState.TASK_STATE_WORKING,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  error: TaskState.TASK_STATE_FAILED,
  stopped: TaskState.TASK_STATE_CANCELED,
};

export function a2aState(status: string): TaskState {
  return STATES[status as Task['status']] ?? TaskState.TASK_STATE_WORKING;
}

export const RESULT_ARTIFACT_ID = 'result';

export function resultArtifact(text: string): Artifact {
  return { artifactId: RESULT_ARTIFACT_ID, name: 'result', description: 'The agent run result', parts: [textPart(text)], metadata: undefined, extensions: [] };
}

/** The status of a task; a final one that did not complete carries its result (the reason) as the status message. */
function statusOf(t: Pick<Task, 'id' | 'status' | 'result' | 'created_at' | 'started_at' | 'finished_at'>) {
  const failedWith = (t.status === 'failed' || t.status === 'error' || t.status === 'stopped') && t.result;
  return {
    state: a2aState(t.status),
    message: failedWith ? message(Role.ROLE_AGENT, t.result!, { messageId: `${t.id}:status`, contextId: t.id, taskId: t.id }) : undefined,
    timestamp: t.finished_at ?? t.started_at ?? t.created_at,
  };
}

export function toA2aTask(t: Task): A2aTask {
  return {
    id: t.id,
    contextId: t.id,
    status: statusOf(t),
    artifacts: t.status === 'completed' && t.result !== null ? [resultArtifact(t.result)] : [],
    history: [],
    metadata: { agentry_status: t.status, agent_id: t.agent_id, execution_attempts: t.execution_attempts },
  };
}

/**
 * One trace event of the task as stream responses: status changes as `statusUpdate`, model chunks as appended parts of
 * the `result` artifact, and at the end the whole result (replacing the chunks) and the final status.
 */
export function toStreamResponses(e: TaskEvent): StreamResponse[] {
  const ids = { taskId: e.task_id, contextId: e.task_id };
  if (e.type === 'chunk' && typeof e.data.text === 'string' && e.data.text) {
    return [{ payload: { $case: 'artifactUpdate', value: { ...ids, artifact: resultArtifact(e.data.text), append: true, lastChunk: false, metadata: undefined } } }];
  }
  if (e.type !== 'task_updated' && e.type !== 'task_finished') return [];
  const t = e.data as unknown as Task;
  const out: StreamResponse[] = [];
  if (e.type === 'task_finished' && t.status === 'completed' && typeof t.result === 'string') {
    out.push({ payload: { $case: 'artifactUpdate', value: { ...ids, artifact: resultArtifact(t.result), append: false, lastChunk: true, metadata: undefined } } });
  }
  out.push({ payload: { $case: 'statusUpdate', value: { ...ids, status: statusOf({ ...t, id: e.task_id }), metadata: { agentry_status: t.status } } } });
  return out;
}
