import { createReadStream } from "node:fs";
import { mkdir, rename, stat, unlink } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import type { Config } from "./config";

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

const isMissing = (error: unknown): boolean =>
  (error as { code?: unknown } | null)?.code === "ENOENT";

/** Removes a file, if it is there. */
export async function removeFile(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
}

/** Files under a directory: `root/{path_id}`. */
class DirectoryStore implements UploadStore {
  readonly incoming: string;

  constructor(private readonly root: string) {
    this.incoming = path.join(root, ".incoming");
  }

  private file(pathId: string): string {
    const file = path.join(this.root, pathId);
    if (!file.startsWith(this.root + path.sep)) throw new Error(`bad path_id ${pathId}`);
    return file;
  }

  async put(pathId: string, from: string): Promise<void> {
    const file = this.file(pathId);
    await mkdir(path.dirname(file), { recursive: true });
    await rename(from, file);
  }

  async open(pathId: string): Promise<StoredFile | undefined> {
    const file = this.file(pathId);
    try {
      const { size } = await stat(file);
      return { body: createReadStream(file), size };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  remove(pathId: string): Promise<void> {
    return removeFile(this.file(pathId));
  }
}

/** Objects in an S3-compatible bucket, keyed by `path_id`. */
class BucketStore implements UploadStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    readonly incoming: string,
  ) {}

  async put(pathId: string, from: string, size: number, contentType: string): Promise<void> {
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: pathId,
          Body: createReadStream(from),
          ContentLength: size,
          ContentType: contentType,
        }),
      );
    } finally {
      await removeFile(from);
    }
  }

  async open(pathId: string): Promise<StoredFile | undefined> {
    try {
      const object = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: pathId }),
      );
      if (object.Body === undefined) return undefined;
      return { body: object.Body as Readable, size: object.ContentLength ?? 0 };
    } catch (error) {
      if (error instanceof NoSuchKey) return undefined;
      throw error;
    }
  }

  async remove(pathId: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: pathId }));
  }
}

/** The store the configuration names. */
export function createUploadStore(config: Config): UploadStore {
  const root = path.resolve(config.CHAT_DATA_DIR, "uploads");
  if (config.CHAT_S3_BUCKET === undefined) return new DirectoryStore(root);
  const { CHAT_S3_ACCESS_KEY_ID: accessKeyId, CHAT_S3_SECRET_ACCESS_KEY: secretAccessKey } = config;
  const client = new S3Client({
    region: config.CHAT_S3_REGION,
    ...(config.CHAT_S3_ENDPOINT === undefined
      ? {}
      : {
          endpoint: config.CHAT_S3_ENDPOINT,
          forcePathStyle: true,
          // Checksums only where S3 requires them: many compatible stores refuse
          // the SDK's default trailing checksums (aws-chunked bodies).
          requestChecksumCalculation: "WHEN_REQUIRED",
          responseChecksumValidation: "WHEN_REQUIRED",
        }),
    ...(accessKeyId === undefined || secretAccessKey === undefined
      ? {}
      : { credentials: { accessKeyId, secretAccessKey } }),
  });
  return new BucketStore(client, config.CHAT_S3_BUCKET, path.join(root, ".incoming"));
}
