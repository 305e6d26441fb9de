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
    /**
     * The task the file was uploaded for (webhook and invoke uploads): it goes with that task (deleteTaskRecords).
     * Null for a knowledge document's file, which goes with its document, and for uploads older than migration 0027
     * that it could not attribute.
     */
    task_id: string | null;
    /**
     * The knowledge document the file was uploaded for (its id drawn before the file is stored, migration 0029): a
     * file whose document does not exist an hour later is an orphan. Null for task uploads and for document files
     * older than 0029 (those go with their document through `kb_documents.file_id` all the same).
     */
    document_id: string | null;
  };
  /**
   * Blobs whose file rows are deleted and whose bytes may still be in the blob store: written in the transaction that
   * deletes the rows, removed once the blob is (src/files/file-disposal.ts, retried by file-sweep.ts).
   */
  file_blob_deletions: {
    blob_key: string;
    organization_id: string;
    file_id: string;
    released_at: number;
  };
}
