/** Where file bytes live. Keys are chosen by the files service (`<organization>/<file id>`), never by callers. */
export interface BlobStore {
  put(key: string, bytes: Uint8Array, contentType: string): Promise<void>;
  /** undefined when the blob does not exist. */
  get(key: string): Promise<Buffer | undefined>;
  /** Deleting a missing blob is not an error. */
  delete(key: string): Promise<void>;
}
