export interface FilesTables {
  files: {
    id: string;
    organization_id: string;
    name: string;
    kind: string;
    mime_type: string;
    size: number;
    sha256: string;
    blob_key: string;
    text: string | null;
    created_at: number;
  };
}
