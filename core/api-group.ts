/** The Kubernetes API group and version of kubecrew's resources (Crew, CrewExecution, CrewTaskResult): written once. */
export const API_GROUP = "kubecrew.io";
export const CRD_VERSION = "v1alpha1";
/** The `apiVersion` field of kubecrew's resources. */
export const API_VERSION = `${API_GROUP}/${CRD_VERSION}` as const;
