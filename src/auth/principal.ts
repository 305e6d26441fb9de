/** Who is calling, established by the auth hook and passed to every service call. */
export interface Principal {
  organizationId: string;
  kind: 'api_key' | 'jwt';
  /** The API key id, or the JWT subject: what `created_by` records. */
  subject: string;
}
