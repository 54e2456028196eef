/** What every store of uploaded files is, and the removal of a temporary file they share. */
import { unlink } from "node:fs/promises";
import type { Readable } from "node:stream";

/** A file received in a request body, complete, in a temporary file. */
export interface ReceivedFile {
  /** The temporary file; the dispatcher removes it after the operation (if the store has not taken it). */
  tempPath: string;
  /** The name the client gave it (may be empty). */
  name: string;
  /** The media type the client gave it. */
  contentType: string;
  size: number;
}

/** A stored file, opened for reading. */
export interface StoredFile {
  body: Readable;
  size: number;
}

/**
 * Where uploaded files live: a directory by default, an S3-compatible bucket
 * when `CHAT_S3_BUCKET` is set. Files arrive as complete temporary files (in
 * {@link UploadStore.incoming}), already within the size limit, so a store
 * never sees a partial or oversized upload. Keys are attachments' `path_id`s,
 * which the server makes (never a client's text).
 */
export interface UploadStore {
  /** The directory uploads are received into before they are stored. */
  readonly incoming: string;
  /** Stores the temporary file `from` as `pathId`; `from` is gone afterwards. */
  put(pathId: string, from: string, size: number, contentType: string): Promise<void>;
  /** The file stored as `pathId`, or undefined when there is none. */
  open(pathId: string): Promise<StoredFile | undefined>;
  /** Removes `pathId` (nothing when it is already gone). */
  remove(pathId: string): Promise<void>;
}

/** Whether `error` says the file is not there. */
export const isMissing = (error: unknown): boolean =>
  (error as { code?: unknown } | null)?.code === "ENOENT";

/** Removes a file, if it is there. */
export async function removeFile(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
}
