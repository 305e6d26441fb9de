/**
 * The workflows domain's tables (migration 0024). Like agents: the row holds the published definition and the
 * staged draft; every published version is kept, immutable, in `workflow_versions`.
 */
export interface WorkflowsTables {
  workflows: {
    organization_id: string;
    id: string;
    /** The working copy's name (draft if any): unique among live workflows of the organization. */
    name: string;
    current_version: number;
    /** JSON of the published WorkflowDefinition. */
    definition: string;
    /** JSON of the staged definition; null when nothing is staged. */
    draft: string | null;
    /** The `orchestration` agent that runs this workflow (a run is a task of that agent). */
    agent_id: string | null;
    created_by: string | null;
    created_at: number;
    updated_at: number;
    deleted_at: number | null;
  };
  workflow_versions: {
    organization_id: string;
    workflow_id: string;
    version: number;
    definition: string;
    created_at: number;
  };
}
