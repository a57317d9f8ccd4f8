// Validates a rendered object against its kind's schema:
// - Kubernetes' own kinds: the JSON schemas generated from Kubernetes' OpenAPI spec, shipped by
//   the npm package `kubernetes-models`;
// - PodMonitor and PrometheusRule: the prometheus-operator CRD schemas, shipped by
//   `@kubernetes-models/prometheus-operator`.
//
// Assumptions and limits:
// - Only the kinds the project renders are mapped. An unmapped apiVersion/kind is itself an
//   error, so a new kind cannot slip through unvalidated.
// - Kubernetes' OpenAPI schemas do not forbid unknown fields (no additionalProperties: false),
//   so a misspelt optional field passes here. The tests in this folder read every field that
//   matters by its correct name, which catches that case for those fields.
import { PodMonitor, PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { ValidatingAdmissionPolicy } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy';
import { ValidatingAdmissionPolicyBinding } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding';
import { DaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { FlowSchema } from 'kubernetes-models/flowcontrol.apiserver.k8s.io/v1/FlowSchema';
import { PriorityLevelConfiguration } from 'kubernetes-models/flowcontrol.apiserver.k8s.io/v1/PriorityLevelConfiguration';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Pod } from 'kubernetes-models/v1/Pod';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import type { K8sObject } from './render.ts';

interface Validatable {
  validate(): void;
}
type ModelFactory = (data: K8sObject) => Validatable;

// The constructors take each kind's exact TypeScript shape; the rendered YAML is untyped, and
// checking it is the schema's job, hence the cast.
function factory<T extends Validatable>(Model: new (data: never) => T): ModelFactory {
  return (data) => new Model(data as never);
}

const MODELS: Readonly<Record<string, ModelFactory>> = {
  'v1/Namespace': factory(Namespace),
  'v1/ConfigMap': factory(ConfigMap),
  'v1/ServiceAccount': factory(ServiceAccount),
  'v1/Pod': factory(Pod),
  'v1/Service': factory(Service),
  'apps/v1/DaemonSet': factory(DaemonSet),
  'apps/v1/Deployment': factory(Deployment),
  'batch/v1/Job': factory(Job),
  'policy/v1/PodDisruptionBudget': factory(PodDisruptionBudget),
  'rbac.authorization.k8s.io/v1/Role': factory(Role),
  'rbac.authorization.k8s.io/v1/RoleBinding': factory(RoleBinding),
  'rbac.authorization.k8s.io/v1/ClusterRole': factory(ClusterRole),
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': factory(ClusterRoleBinding),
  'flowcontrol.apiserver.k8s.io/v1/FlowSchema': factory(FlowSchema),
  'flowcontrol.apiserver.k8s.io/v1/PriorityLevelConfiguration': factory(PriorityLevelConfiguration),
  'networking.k8s.io/v1/NetworkPolicy': factory(NetworkPolicy),
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy': factory(ValidatingAdmissionPolicy),
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding': factory(ValidatingAdmissionPolicyBinding),
  'monitoring.coreos.com/v1/PodMonitor': factory(PodMonitor),
  'monitoring.coreos.com/v1/PrometheusRule': factory(PrometheusRule),
};

/** Schema errors of one object, as `Kind/name: message` lines; empty when it validates. */
export function schemaErrors(obj: K8sObject): string[] {
  const id = `${obj.kind}/${obj.metadata.name}`;
  const make = MODELS[`${obj.apiVersion}/${obj.kind}`];
  if (make === undefined) return [`${id}: apiVersion ${obj.apiVersion} kind ${obj.kind} must have a known schema`];
  try {
    make(obj).validate();
    return [];
  } catch (err) {
    return [`${id}: ${err instanceof Error ? err.message : String(err)}`];
  }
}
