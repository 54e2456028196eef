/**
 * Uploads in an S3-compatible bucket (`CHAT_S3_BUCKET`), loaded by
 * `upload-store.ts` when first used: the AWS SDK is not a cost of a server
 * that keeps its files in a directory, nor of one that has not stored one yet.
 */
import { createReadStream } from "node:fs";
import type { Readable } from "node:stream";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import type { Config } from "./config";
import { type StoredFile, type UploadStore, removeFile } from "./file-store";

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

/** The bucket store of `config` (its `CHAT_S3_*` settings). */
export function createBucketStore(config: Config, incoming: string): UploadStore {
  const bucket = config.CHAT_S3_BUCKET;
  if (bucket === undefined) throw new Error("CHAT_S3_BUCKET is not set");
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
  return new BucketStore(client, bucket, incoming);
}
