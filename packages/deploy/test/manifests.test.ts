import { type K8sObject, OVERLAYS, checkRules, render, validateSchemas } from "../src/manifests";

const rendered = new Map(OVERLAYS.map((overlay) => [overlay, render(overlay)]));

function objects(overlay: (typeof OVERLAYS)[number]): K8sObject[] {
  // A deep copy, so that a test's changes stay its own.
  return structuredClone(rendered.get(overlay) ?? []);
}

function find(list: K8sObject[], kind: string, name: string): K8sObject {
  const found = list.find((o) => o.kind === kind && o.metadata.name === name);
  if (found === undefined) throw new Error(`no ${kind}/${name}`);
  return found;
}

function container(list: K8sObject[], app: string) {
  const found = find(list, "Deployment", app).spec?.template?.spec?.containers?.[0];
  if (found === undefined) throw new Error(`no container in ${app}`);
  return found;
}

describe.each(OVERLAYS)("the %s overlay", (overlay) => {
  it("renders objects that all validate against the Kubernetes schemas", async () => {
    const list = objects(overlay);
    expect(list.length).toBeGreaterThan(10);
    expect(await validateSchemas(list)).toEqual([]);
  });

  it("follows the platform rules", () => {
    expect(checkRules(objects(overlay))).toEqual([]);
  });

  it("puts everything in the overlay's namespace", () => {
    const namespace = overlay === "dev" ? "chat-dev" : "chat";
    for (const object of objects(overlay).filter((o) => o.kind !== "Namespace"))
      expect([object.kind, object.metadata.name, object.metadata.namespace]).toEqual([
        object.kind,
        object.metadata.name,
        namespace,
      ]);
  });
});

describe("what each overlay brings", () => {
  it("dev runs its own PostgreSQL with a volume, and generates the database Secret chat-api reads", () => {
    const dev = objects("dev");
    const postgres = find(dev, "StatefulSet", "postgres");
    expect(postgres.spec?.replicas).toBe(1);
    expect(postgres.spec?.volumeClaimTemplates).toHaveLength(1);
    const secretName = container(dev, "chat-api").env?.find((e) => e.name === "DATABASE_URL")
      ?.valueFrom?.secretKeyRef?.name;
    expect(dev.some((o) => o.kind === "Secret" && o.metadata.name === secretName)).toBe(true);
  });

  it("prod expects an external database: no PostgreSQL, no generated Secret, pinned images", () => {
    const prod = objects("prod");
    expect(prod.filter((o) => o.kind === "StatefulSet" || o.kind === "Secret")).toEqual([]);
    expect(
      container(prod, "chat-api").env?.find((e) => e.name === "DATABASE_URL")?.valueFrom
        ?.secretKeyRef?.name,
    ).toBe("chat-api-database");
    for (const app of ["chat-api", "scoreboard"])
      expect(container(prod, app).image).toMatch(
        /^registry\.example\.com\/chat-scoreboard\/[\w-]+:\d+\.\d+\.\d+$/,
      );
  });
});

describe("uploaded files", () => {
  const config = (list: K8sObject[]) =>
    (find(list, "ConfigMap", "chat-api") as K8sObject & { data?: Record<string, string> }).data ??
    {};

  it("prod keeps them in a bucket every replica shares, with credentials from an optional Secret", () => {
    const prod = objects("prod");
    expect(config(prod).CHAT_S3_BUCKET).toBe("chat-uploads");
    expect(container(prod, "chat-api").envFrom).toContainEqual({
      secretRef: { name: "chat-api-uploads", optional: true },
    });
  });

  it("without a bucket, they go to the pod's writable /tmp volume, not the read-only root", () => {
    const dev = objects("dev");
    expect(config(dev).CHAT_S3_BUCKET).toBeUndefined();
    expect(config(dev).CHAT_DATA_DIR).toMatch(/^\/tmp\//);
    expect(container(dev, "chat-api").volumeMounts).toContainEqual(
      expect.objectContaining({ mountPath: "/tmp" }),
    );
  });
});

describe("the rules catch what they are for", () => {
  it("a missing probe", () => {
    const list = objects("prod");
    delete container(list, "chat-api").readinessProbe;
    delete container(list, "scoreboard").livenessProbe;
    expect(checkRules(list)).toEqual(
      expect.arrayContaining([
        "Deployment/chat-api: container chat-api has no readinessProbe",
        "Deployment/scoreboard: container scoreboard has no livenessProbe",
      ]),
    );
  });

  it("a selector that matches nothing", () => {
    const list = objects("prod");
    const service = find(list, "Service", "chat-api");
    if (service.spec !== undefined)
      service.spec.selector = { "app.kubernetes.io/name": "chat-apj" };
    const deployment = find(list, "Deployment", "scoreboard");
    const labels = deployment.spec?.template?.metadata?.labels;
    if (labels !== undefined) labels["app.kubernetes.io/name"] = "scorebored";
    expect(checkRules(list)).toEqual(
      expect.arrayContaining([
        "Service/chat-api: selects no pods",
        "Deployment/scoreboard: its selector matches none of its own pods",
      ]),
    );
  });

  it("a container running as root", () => {
    const list = objects("prod");
    const pod = find(list, "Deployment", "chat-api").spec?.template?.spec;
    if (pod?.securityContext !== undefined) pod.securityContext.runAsNonRoot = false;
    const scoreboard = container(list, "scoreboard");
    scoreboard.securityContext = { ...scoreboard.securityContext, runAsUser: 0 };
    expect(checkRules(list)).toEqual(
      expect.arrayContaining([
        "Deployment/chat-api: pods may run as root",
        "Deployment/scoreboard: container scoreboard runs as root",
      ]),
    );
  });

  it("an image that is not the Dockerfile's, an HPA without a target, a plain-HTTP gRPC port", () => {
    const list = objects("prod");
    container(list, "chat-api").image = "registry.example.com/other/chat:1";
    const hpa = find(list, "HorizontalPodAutoscaler", "scoreboard");
    if (hpa.spec?.scaleTargetRef !== undefined) hpa.spec.scaleTargetRef.name = "scorebord";
    const port = find(list, "Service", "scoreboard").spec?.ports?.[0];
    if (port !== undefined) delete port.appProtocol;
    expect(checkRules(list)).toEqual(
      expect.arrayContaining([
        "chat-api: container chat-api runs registry.example.com/other/chat:1, not the Dockerfile's chat-api",
        "HorizontalPodAutoscaler/scoreboard: scales Deployment/scorebord, which does not exist",
        "scoreboard: Service scoreboard port grpc is not kubernetes.io/h2c",
      ]),
    );
  });

  it("an object the Kubernetes schema refuses", async () => {
    const list = objects("prod");
    const spec = find(list, "Deployment", "chat-api").spec as Record<string, unknown>;
    spec.replicas = "two";
    const problems = await validateSchemas(list);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^Deployment\/chat-api: .*replicas/);
  });
});
