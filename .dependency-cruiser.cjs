// The layers of src/, enforced by `npm run lint` (dependency-cruiser). A folder may import its own
// layer and the layers below it, never one above; and no two folders may import each other, however
// indirectly (no folder cycles). Lowest first:
//
//   infrastructure  common config database redis queues crypto observability generated
//   providers       one folder per provider: verification, normalization, API client, capabilities
//   vocabulary      connections/lifecycle: a connection's states and transitions, as data (the job
//                   engine reads what a status does to jobs); replies: reply templates, business
//                   hours and the reply settings a connection inherits (pure functions)
//   records         leads auth users audit tenants clients: the lead store, API keys and tenant scopes, console users
//                   with their invitations and sessions (auth's guard reads users' sessions)
//   jobs            the job engine: state machine, enqueueing, runner, operation workers, dispatcher,
//                   and the processors of an event's side effects
//   domain          connections alerts: the modules that own a connection's and an alert's life,
//                   with their own jobs (provider sync, notifications) and sweeps
//   features        ingestion admin replay retention oauth reconciliation: what the HTTP API and the worker offer
//   entry points    src/*.ts: main.ts worker.ts http.ts reencrypt.ts user-invite.ts and the root modules
const LAYERS = [
  ["infrastructure", "common|config|database|redis|queues|crypto|observability|generated"],
  ["providers", "providers"],
  ["vocabulary", "connections/lifecycle|replies"],
  ["records", "leads|auth|users|audit|tenants|clients"],
  ["jobs", "jobs"],
  ["domain", "connections(?!/lifecycle/)|alerts"],
  ["features", "ingestion|admin|replay|retention|oauth|reconciliation"],
];

const folder = (names) => `^src/(${names})/`;

/** For each layer: importing any layer above it is forbidden. */
const noReachingUp = LAYERS.map(([name, names], index) => ({
  name: `${name}-imports-no-layer-above`,
  comment: `${name} (${names}) may import only its own layer and the layers below it.`,
  severity: "error",
  from: { path: folder(names) },
  to: {
    path: [
      ...LAYERS.slice(index + 1).map(([, above]) => folder(above)),
      "^src/[^/]+\\.ts$", // the entry points sit above every folder
    ],
  },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...noReachingUp,
    {
      name: "no-folder-cycles",
      comment:
        "Two folders that import each other (directly or through others) are one concept: merge or split them.",
      severity: "error",
      scope: "folder",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "no-module-cycles",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "no-src-to-tests",
      comment: "Production code never imports test support.",
      severity: "error",
      from: { path: "^src/", pathNot: "\\.spec\\.ts$" },
      to: { path: "^(test|faults|bench)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Unit specs are tests: they may exercise two layers together.
    exclude: { path: ["^src/generated/", "\\.spec\\.ts$"] },
    includeOnly: "^src/",
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default"],
      extensions: [".ts", ".js"],
    },
  },
};
