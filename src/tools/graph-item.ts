/** One item of an agent's `graph` (spec 2.4): a tool of the agent and the items to run after it. */
export interface GraphItem {
  id?: string | null;
  item_id: string;
  name?: string | null;
  type: string;
  sub_type?: string | null;
  targets: string[];
  settings?: Record<string, unknown> | null;
  is_first?: boolean;
}
