import {
  doDeleteAttachment,
  doUploadFile,
  listAttachments,
  temporaryFileUrl,
  uploadRoom,
} from "../actions/uploads";
import { userEndpoint } from "../http/typed-endpoint";
import type { Services } from "../http/context";

/** Uploaded files: upload, temporary URLs, the user's list. Files themselves are served by `routes/files.ts`. */
export function uploadRoutes({ db, config, uploads }: Services) {
  const quota = {
    files: config.CHAT_MAX_OBJECTS_PER_USER,
    bytes: config.CHAT_UPLOAD_QUOTA_MIB_PER_USER * 1024 * 1024,
  };
  return {
    uploadFile: userEndpoint(
      {
        operationId: "upload-file",
        summary: "Upload a file",
        tag: "messages",
        params: {},
        upload: { room: (user) => uploadRoom(db, user, quota) },
      },
      async ({ user, file }) => {
        if (file === undefined) throw new Error("an upload operation without its file");
        const { url, filename } = await doUploadFile(db, uploads, user, file, quota);
        return { uri: url, url, filename };
      },
    ),
    getFileTemporaryUrl: userEndpoint(
      {
        pathParams: ["realm_id_str", "filename"],
        operationId: "get-file-temporary-url",
        summary: "Get public temporary URL",
        tag: "messages",
        params: {},
      },
      async ({ user, path }) => ({
        url: await temporaryFileUrl(db, user, path.realm_id_str, path.filename),
      }),
    ),
    getAttachments: userEndpoint(
      {
        operationId: "get-attachments",
        summary: "Get attachments",
        tag: "attachments",
        params: {},
      },
      ({ user }) => listAttachments(db, user),
    ),
    removeAttachment: userEndpoint(
      {
        pathParams: ["attachment_id"],
        operationId: "remove-attachment",
        summary: "Delete an attachment",
        tag: "attachments",
        params: {},
      },
      async ({ user, path }) => {
        await doDeleteAttachment(db, uploads, user, path.attachment_id);
        return {};
      },
    ),
  };
}
