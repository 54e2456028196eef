import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { REPO_ROOT } from "./dockerfile";

/** The parts of Kubernetes objects the rules read (everything else passes through untyped). */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Spec;
  [field: string]: unknown;
}

interface Probe {
  httpGet?: { path?: string; port?: number | string };
  grpc?: { port?: number };
  exec?: { command?: string[] };
}

interface Container {
  name: string;
  image?: string;
  command?: string[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    runAsNonRoot?: boolean;
    runAsUser?: number;
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    privileged?: boolean;
    capabilities?: { drop?: string[] };
    seccompProfile?: { type?: string };
  };
  env?: { name: string; valueFrom?: { secretKeyRef?: { name?: string; key?: string } } }[];
  envFrom?: {
    configMapRef?: { name?: string; optional?: boolean };
    secretRef?: { name?: string; optional?: boolean };
  }[];
  volumeMounts?: { name: string; mountPath: string }[];
}

interface PodSpec {
  containers?: Container[];
  initContainers?: Container[];
  terminationGracePeriodSeconds?: number;
  securityContext?: {
    runAsNonRoot?: boolean;
    runAsUser?: number;
    seccompProfile?: { type?: string };
  };
}

interface Spec {
  replicas?: number;
  selector?: { matchLabels?: Record<string, string> } & Record<string, string>;
  template?: { metadata?: { labels?: Record<string, string> }; spec?: PodSpec };
  volumeClaimTemplates?: unknown[];
  ports?: { name?: string; port?: number; appProtocol?: string }[];
  clusterIP?: string;
  scaleTargetRef?: { kind?: string; name?: string };
  minReplicas?: number;
  podSelector?: { matchLabels?: Record<string, string> };
}

/** The overlays operators apply. */
export const OVERLAYS = ["dev", "prod"] as const;

/** The two services of this repository: their Deployments are named after their apps. */
export const APPS = ["chat-api", "scoreboard"] as const;

/** `kubectl kustomize k8s/overlays/NAME`, parsed. */
export function render(overlay: string): K8sObject[] {
  const text = execFileSync("kubectl", ["kustomize", join(REPO_ROOT, "k8s/overlays", overlay)], {
    encoding: "utf8",
  });
  return parseAllDocuments(text)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

type ModelClass = new (data: object) => { validate(): void };

/**
 * Validates every object against the Kubernetes OpenAPI schemas, offline
 * (kubernetes-models); returns the problems.
 */
export async function validateSchemas(objects: readonly K8sObject[]): Promise<string[]> {
  const problems: string[] = [];
  for (const object of objects) {
    const [group, version] = object.apiVersion.includes("/")
      ? object.apiVersion.split("/")
      : ["", object.apiVersion];
    const module =
      group === "" ? `kubernetes-models/${version}` : `kubernetes-models/${group}/${version}`;
    let models: Record<string, unknown>;
    try {
      models = (await import(module)) as Record<string, unknown>;
    } catch {
      problems.push(`${describe(object)}: unknown API version ${object.apiVersion}`);
      continue;
    }
    const Model = models[object.kind] as ModelClass | undefined;
    if (Model === undefined) {
      problems.push(`${describe(object)}: unknown kind ${object.kind} in ${object.apiVersion}`);
      continue;
    }
    try {
      new Model(forValidation(object)).validate();
    } catch (error) {
      problems.push(
        `${describe(object)}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  return problems;
}

/**
 * kustomize wraps long base64 Secret values across lines; the API server's
 * decoder (Go's encoding/base64) skips the line breaks, the schema's "byte"
 * format does not. Validate what the server decodes.
 */
function forValidation(object: K8sObject): K8sObject {
  const data = object.data;
  if (object.kind !== "Secret" || data === null || typeof data !== "object") return object;
  return {
    ...object,
    data: Object.fromEntries(
      Object.entries(data as Record<string, string>).map(([k, v]) => [k, v.replace(/\s/g, "")]),
    ),
  };
}

function describe(object: K8sObject): string {
  return `${object.kind}/${object.metadata.name}`;
}

/** Whether `selector` selects pods labelled `labels` (every selector pair present). */
function selects(
  selector: Record<string, string> | undefined,
  labels: Record<string, string> | undefined,
) {
  if (selector === undefined || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

/** The image title each app's Dockerfile declares. */
export function dockerfileTitles(root = REPO_ROOT): Map<string, string> {
  return new Map(
    APPS.map((app) => {
      const text = readFileSync(join(root, "apps", app, "Dockerfile"), "utf8");
      return [app, /org\.opencontainers\.image\.title="([^"]+)"/.exec(text)?.[1] ?? ""];
    }),
  );
}

const WORKLOADS = new Set(["Deployment", "StatefulSet"]);

function checkContainer(where: string, c: Container, main: boolean, problems: string[]) {
  const at = `${where}: container ${c.name}`;
  if (main && c.readinessProbe === undefined) problems.push(`${at} has no readinessProbe`);
  if (main && c.livenessProbe === undefined) problems.push(`${at} has no livenessProbe`);
  for (const kind of ["cpu", "memory"]) {
    if (c.resources?.requests?.[kind] === undefined) problems.push(`${at} requests no ${kind}`);
    if (c.resources?.limits?.[kind] === undefined) problems.push(`${at} has no ${kind} limit`);
  }
  const sc = c.securityContext;
  if (sc?.allowPrivilegeEscalation !== false) problems.push(`${at} may escalate privileges`);
  if (sc?.readOnlyRootFilesystem !== true) problems.push(`${at} has a writable root filesystem`);
  if (!(sc?.capabilities?.drop ?? []).includes("ALL")) problems.push(`${at} keeps capabilities`);
  if (sc?.privileged === true) problems.push(`${at} is privileged`);
  if (sc?.runAsUser === 0 || sc?.runAsNonRoot === false) problems.push(`${at} runs as root`);
}

/**
 * The platform rules, as problems (empty when all hold): every workload's
 * selector matches its pods, its pods run as non-root with the restricted
 * security context, resources, probes and a grace period; every Service,
 * PodDisruptionBudget and NetworkPolicy selects some workload's pods; every
 * HorizontalPodAutoscaler scales an existing Deployment from two replicas;
 * the apps' images are the Dockerfiles' images; chat-api probes /readyz and
 * /healthz, migrates in an init container and reads DATABASE_URL from a
 * Secret; scoreboard has native gRPC probes, h2c Service ports and a headless
 * Service.
 */
export function checkRules(objects: readonly K8sObject[], titles = dockerfileTitles()): string[] {
  const problems: string[] = [];
  const workloads = objects.filter((o) => WORKLOADS.has(o.kind));
  const podLabels = workloads.map((w) => w.spec?.template?.metadata?.labels);
  const selectsSomePod = (selector: Record<string, string> | undefined) =>
    podLabels.some((labels) => selects(selector, labels));

  for (const workload of workloads) {
    const where = describe(workload);
    const spec = workload.spec ?? {};
    const pod = spec.template?.spec ?? {};
    if (!selects(spec.selector?.matchLabels, spec.template?.metadata?.labels))
      problems.push(`${where}: its selector matches none of its own pods`);
    const podSecurity = pod.securityContext;
    if (podSecurity?.runAsNonRoot !== true) problems.push(`${where}: pods may run as root`);
    if (podSecurity?.runAsUser === 0) problems.push(`${where}: pods run as root (runAsUser 0)`);
    if (podSecurity?.seccompProfile?.type !== "RuntimeDefault")
      problems.push(`${where}: no RuntimeDefault seccomp profile`);
    if (pod.terminationGracePeriodSeconds === undefined)
      problems.push(`${where}: no terminationGracePeriodSeconds`);
    for (const c of pod.containers ?? []) checkContainer(where, c, true, problems);
    for (const c of pod.initContainers ?? []) checkContainer(where, c, false, problems);
  }

  for (const app of APPS) {
    const deployment = objects.find((o) => o.kind === "Deployment" && o.metadata.name === app);
    if (deployment === undefined) {
      problems.push(`${app}: no Deployment`);
      continue;
    }
    if ((deployment.spec?.replicas ?? 1) < 2) problems.push(`${app}: fewer than 2 replicas`);
    const pod = deployment.spec?.template?.spec ?? {};
    const main = pod.containers?.find((c) => c.name === app);
    const title = titles.get(app) ?? "";
    for (const c of [...(pod.containers ?? []), ...(pod.initContainers ?? [])]) {
      const repository = (c.image ?? "").replace(/[:@].*$/, "");
      if (!repository.endsWith(`/${title}`))
        problems.push(
          `${app}: container ${c.name} runs ${c.image ?? "no image"}, not the Dockerfile's ${title}`,
        );
    }
    if (main === undefined) {
      problems.push(`${app}: no container named ${app}`);
      continue;
    }
    if (main.startupProbe === undefined) problems.push(`${app}: no startupProbe`);
    if (app === "chat-api") {
      if (main.readinessProbe?.httpGet?.path !== "/readyz")
        problems.push("chat-api: readiness is not GET /readyz");
      if (main.livenessProbe?.httpGet?.path !== "/healthz")
        problems.push("chat-api: liveness is not GET /healthz");
      if (
        !(pod.initContainers ?? []).some((c) => (c.command ?? []).join(" ").includes("migrate-cli"))
      )
        problems.push("chat-api: no init container runs the migrations");
      if (
        !main.env?.some(
          (e) => e.name === "DATABASE_URL" && e.valueFrom?.secretKeyRef?.key === "DATABASE_URL",
        )
      )
        problems.push("chat-api: DATABASE_URL does not come from a Secret");
    } else {
      for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"] as const) {
        if (main[probe]?.grpc === undefined)
          problems.push(`scoreboard: ${probe} is not a gRPC probe`);
      }
      const services = objects.filter(
        (o) =>
          o.kind === "Service" &&
          selects(o.spec?.selector, deployment.spec?.template?.metadata?.labels),
      );
      if (!services.some((s) => s.spec?.clusterIP === "None"))
        problems.push("scoreboard: no headless Service");
      for (const service of services) {
        for (const port of service.spec?.ports ?? []) {
          if (port.name === "grpc" && port.appProtocol !== "kubernetes.io/h2c")
            problems.push(
              `scoreboard: Service ${service.metadata.name} port grpc is not kubernetes.io/h2c`,
            );
        }
      }
    }
  }

  for (const object of objects) {
    const where = describe(object);
    if (object.kind === "Service" && !selectsSomePod(object.spec?.selector))
      problems.push(`${where}: selects no pods`);
    if (
      object.kind === "PodDisruptionBudget" &&
      !selectsSomePod(object.spec?.selector?.matchLabels)
    )
      problems.push(`${where}: selects no pods`);
    if (object.kind === "NetworkPolicy" && !selectsSomePod(object.spec?.podSelector?.matchLabels))
      problems.push(`${where}: applies to no pods`);
    if (object.kind === "HorizontalPodAutoscaler") {
      const target = object.spec?.scaleTargetRef;
      if (!objects.some((o) => o.kind === target?.kind && o.metadata.name === target.name))
        problems.push(
          `${where}: scales ${target?.kind ?? "?"}/${target?.name ?? "?"}, which does not exist`,
        );
      if ((object.spec?.minReplicas ?? 1) < 2) problems.push(`${where}: fewer than 2 replicas`);
    }
  }
  return problems;
}
