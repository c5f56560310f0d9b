// The types of the IPC edge. Those Rust sends or takes are generated from Rust into
// bindings.ts (never edited by hand; the test command fails when it drifts) and re-exported
// here under the names the UI uses; the few shapes below are the UI's own.

export type {
  AppStatus,
  Attached,
  Attachment,
  AttachmentKind,
  AttachmentRef,
  BranchPoint,
  CallRef,
  ComparedModel,
  ConnectionFailure,
  ConnectionReport,
  Finish,
  StoredCall,
  Transport,
  Conversation,
  ConversationArtifact,
  ConversationDetail,
  ConversationTool,
  Draft,
  DropEvent,
  ExportFormat,
  ImportedProfile,
  ImportItem,
  ImportPreview,
  JsonValue,
  KeychainStatus,
  LocalServer,
  McpAppView,
  McpServerStatus,
  McpServerView,
  Network,
  Reach,
  SandboxEntry,
  ServerSandbox,
  Skill,
  SkillDetail,
  SkillFile,
  SkillOrigin,
  ScriptsAllowed,
  SkillUse,
  ConversationSkill,
  ShownScript,
  TimeRule,
  Missed,
  NewSchedule,
  Schedule,
  RunStatus,
  ScheduleRun,
  ScheduleRunStarted,
  TaskState,
  CallTask,
  CallControl,
  Summary,
  ContextUse,
  FoundServer as RegistryServer,
  BundleInfo,
  BundleInstallRequest,
  BundleOption,
  OfferedBundle,
  ShownProposal,
  InstallRequest,
  Need as RegistryNeed,
  SearchPage as RegistryPage,
  Source as RegistrySource,
  Message,
  MessagePage,
  MessageStatus,
  LocalModel,
  ModelInfo,
  ModelPrice,
  ModelWindow,
  WindowSource,
  NewProvider,
  OfferedArgument,
  OfferedPrompt,
  OfferedResource,
  OfferedTemplate,
  OffersOf,
  Price,
  PriceSource,
  Profile,
  ProfileChoice,
  ProfileFields,
  Project,
  ProjectFields,
  ProjectInput,
  ProjectFile,
  FilesProgress,
  AddedFiles,
  Provider,
  ProviderKind,
  ProviderKindInfo,
  PromptUse,
  PullProgress,
  ResultPart,
  ResultView,
  Role,
  SearchHit,
  ServerOffers,
  Settings,
  SnippetPart,
  StandingApproval,
  SwitchedBranch,
  Theme,
  ToolMode,
  ToolModeChoice,
  ToolModeSource,
  ToolReview,
  ToolRun,
  ToolStatus,
  ToolSuggestion,
  ToolToggle,
  ShellCommandStatus,
  UpdateProgress,
  UpdateStatus,
  UsageDay,
  UsageReport,
  UsageTotal,
  Outcome,
  Rule,
  RuleHit,
  RuleSource,
  Target,
  Test,
  PolicyFile,
  PolicyMark,
  PolicyView,
  AuditDecision,
  AuditEntry,
  AuditFilter,
  AuditOrigin,
} from "./bindings";

export type {
  /** Every command rejects with this shape. */
  IpcError as CommandError,
  /** A starting point in the "Add a provider" form. */
  Preset as ProviderPreset,
  /** What the supervisor says of a running (or once-running) MCP server. */
  ServerState as McpServerState,
  /** One field of a server's form; every text in it is the server's. */
  ElicitField as FormField,
  /** A form an MCP server asks the person to fill in. */
  ElicitationRequest as McpForm,
  /** What the person did with a form. */
  ElicitationAnswer as McpFormAnswer,
} from "./bindings";

/** A server typed in on the Servers page: a command line or an address (the command's arguments). */
export interface NewMcpServer {
  name: string;
  command_line?: string;
  url?: string;
}

/**
 * A model's price as the person typed it, in dollars per million tokens ("2.50"); Rust reads it
 * (the page never does sums on prices). Input and output go together, cached input is optional;
 * all three null forgets the person's price.
 */
export interface TypedPrice {
  input: string | null;
  output: string | null;
  cached: string | null;
}
