import { type ProjectConfig, removeTemplates } from "./templates";

/** Runs once after every test file (one teardown for all projects): removes the templates and any copy left. */
export default async function teardown(_global: unknown, project: ProjectConfig): Promise<void> {
  await removeTemplates(project);
}
