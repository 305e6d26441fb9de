export interface ConnectorsTables {
  /** An imported OpenAPI document's metadata. The document itself is in connector_documents (it can be 10 MB). */
  connectors: {
    id: string;
    organization_id: string;
    name: string;
    description: string;
    /** info.version of the document. */
    version: string;
    /** The publisher's OpenAPI/Swagger version: "2.0", "3.0.3", "3.1.0". */
    openapi_version: string;
    server_url: string | null;
    total_operations: number;
    created_at: number;
  };
  connector_documents: {
    connector_id: string;
    organization_id: string;
    /** JSON of the document as OpenAPI 3.x (Swagger 2.0 upgraded). */
    document: string;
    /** Source size in bytes: weighs the document in the parse cache. */
    size: number;
  };
  /** The catalog: one row per operation, for listing and search without parsing the document. */
  connector_operations: {
    connector_id: string;
    organization_id: string;
    id: string;
    operation_id: string;
    method: string;
    path: string;
    summary: string | null;
    description: string | null;
    /** JSON array of strings. */
    tags: string;
    /** Lower-cased operationId, path, summary, description and tags: what `query` searches. */
    search_text: string;
    position: number;
  };
  connector_connections: {
    id: string;
    organization_id: string;
    connector_id: string;
    name: string;
    base_url: string | null;
    /** Sealed JSON of the `security` object (null: none). */
    security: string | null;
    /** Sealed JSON of the static headers (they often carry credentials). */
    headers: string | null;
    /** Sealed JSON of the general query parameters sent with every call. */
    general_params: string | null;
    timeout_ms: number;
    created_at: number;
  };
}
