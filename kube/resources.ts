import { API_GROUP, CRD_VERSION } from "../core/api-group.ts";
import { resourceType } from "./runtime/resources.ts";

/**
 * The resources kubecrew touches: its own kinds (defined here) and Kubernetes' built-in ones (runtime/resources.ts,
 * named here too, so a component imports every resource path from one place).
 */
export {
  CONFIG_MAPS,
  EVENTS,
  JOBS,
  LEASES,
  PODS,
  resourcePath,
  SECRETS,
  type ResourceType,
} from "./runtime/resources.ts";

export const CREWS = resourceType(API_GROUP, CRD_VERSION, "crews", "Crew");
export const CREW_EXECUTIONS = resourceType(API_GROUP, CRD_VERSION, "crewexecutions", "CrewExecution");
export const CREW_TASK_RESULTS = resourceType(API_GROUP, CRD_VERSION, "crewtaskresults", "CrewTaskResult");

/** Labels on every child of an execution: selectors for the informers and for cleanup. */
export const LABEL_EXECUTION = "kubecrew.io/execution";
export const LABEL_TASK = "kubecrew.io/task";
export const LABEL_TASK_INDEX = "kubecrew.io/task-index";
/** On the children of a humanInput task's revision (1, 2, …): its first answer's have none. */
export const LABEL_TASK_REVISION = "kubecrew.io/task-revision";
export const LABEL_CREW = "kubecrew.io/crew";
export const LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
export const MANAGED_BY = "kubecrew";
/** The label that groups the controller's shard and member Leases (the value is the election id). */
export const LEASE_GROUP_LABEL = "kubecrew.io/controller-leases";

/**
 * A kickoff's Idempotency-Key on its CrewExecution (never the key itself): the label holds the scoped key's hash
 * (cut to a label value's 63 characters) for `kubectl get ce -l`; the annotations hold the full hashes of the key and
 * of the request body, which the API compares on a retry.
 */
export const LABEL_IDEMPOTENCY_KEY = "kubecrew.io/idempotency-key";
export const ANNOTATION_IDEMPOTENCY_KEY = "kubecrew.io/idempotency-key-sha256";
export const ANNOTATION_IDEMPOTENCY_REQUEST = "kubecrew.io/idempotency-request-sha256";
/**
 * The W3C traceparent a CrewExecution or FlowExecution was created under (tracing on): the kickoff's, or for a
 * CrewExecution a flow method started, its flow run's span. Its trace's id and the object's parent span.
 */
export const ANNOTATION_TRACEPARENT = "kubecrew.io/traceparent";

export const FLOWS = resourceType(API_GROUP, CRD_VERSION, "flows", "Flow");
export const FLOW_EXECUTIONS = resourceType(API_GROUP, CRD_VERSION, "flowexecutions", "FlowExecution");
/** On a flow method's child CrewExecution: the FlowExecution it runs for. */
export const LABEL_FLOW_EXECUTION = "kubecrew.io/flow-execution";
/** On the Crews a Flow's agent and crew methods run: the Flow. */
export const LABEL_FLOW = "kubecrew.io/flow";
