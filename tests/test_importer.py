"""kspread import: a kubectl dump of a cluster turned into a case."""

from __future__ import annotations

import contextlib
import io
import json
import re
import textwrap
from dataclasses import asdict, replace
from pathlib import Path

import pytest
import yaml

from kspread.format import importer
from kspread.format.loader import load_case, read_file
from kspread.workflow.cli import main as cli_main
from kspread.workflow.runner import check

# A small cluster as `kubectl get nodes,namespaces,pods,services,replicationcontrollers,replicasets,
# statefulsets,poddisruptionbudgets,priorityclasses -A -o yaml` prints it (plus a Deployment,
# a kind kspread does not read), kubectl's noise included.
DUMP = """\
apiVersion: v1
items:
- apiVersion: v1
  kind: Node
  metadata:
    annotations:
      kubeadm.alpha.kubernetes.io/cri-socket: unix:///run/containerd/containerd.sock
      node.alpha.kubernetes.io/ttl: "0"
      volumes.kubernetes.io/controller-managed-attach-detach: "true"
    creationTimestamp: "2024-05-01T09:00:00Z"
    labels:
      beta.kubernetes.io/arch: amd64
      beta.kubernetes.io/os: linux
      kubernetes.io/arch: amd64
      kubernetes.io/hostname: cp-1
      kubernetes.io/os: linux
      node-role.kubernetes.io/control-plane: ""
      topology.kubernetes.io/zone: zone-a
    managedFields:
    - apiVersion: v1
      fieldsType: FieldsV1
      fieldsV1:
        f:metadata:
          f:labels:
            .: {}
            f:kubernetes.io/hostname: {}
      manager: kubelet
      operation: Update
      time: "2024-05-01T09:00:00Z"
    name: cp-1
    resourceVersion: "51234"
    uid: 0b1c2d3e-0000-4000-8000-000000000001
  spec:
    podCIDR: 10.244.0.0/24
    podCIDRs:
    - 10.244.0.0/24
    taints:
    - effect: NoSchedule
      key: node-role.kubernetes.io/control-plane
  status:
    addresses:
    - address: 172.18.0.2
      type: InternalIP
    - address: cp-1
      type: Hostname
    allocatable:
      cpu: "2"
      ephemeral-storage: 61202244Ki
      hugepages-1Gi: "0"
      hugepages-2Mi: "0"
      memory: 3930460Ki
      pods: "110"
    capacity:
      cpu: "2"
      ephemeral-storage: 61202244Ki
      hugepages-1Gi: "0"
      hugepages-2Mi: "0"
      memory: 4032860Ki
      pods: "110"
    conditions:
    - lastHeartbeatTime: "2024-05-02T10:00:00Z"
      lastTransitionTime: "2024-05-01T09:00:00Z"
      message: kubelet is posting ready status
      reason: KubeletReady
      status: "True"
      type: Ready
    daemonEndpoints:
      kubeletEndpoint:
        Port: 10250
    images:
    - names:
      - registry.k8s.io/etcd@sha256:44a8e24dcbba3470ee1fee21d5e88d128c936e9b55d4bc51fbef8086f8ed123b
      - registry.k8s.io/etcd:3.5.12-0
      sizeBytes: 57236178
    nodeInfo:
      architecture: amd64
      containerRuntimeVersion: containerd://1.7.13
      kernelVersion: 6.5.0-1018-azure
      kubeProxyVersion: v1.30.0
      kubeletVersion: v1.30.0
      operatingSystem: linux
- apiVersion: v1
  kind: Node
  metadata:
    annotations:
      node.alpha.kubernetes.io/ttl: "0"
    creationTimestamp: "2024-05-01T09:01:00Z"
    labels:
      kubernetes.io/arch: amd64
      kubernetes.io/hostname: worker-a
      kubernetes.io/os: linux
      topology.kubernetes.io/zone: zone-a
      disktype: ssd
    managedFields:
    - apiVersion: v1
      fieldsType: FieldsV1
      fieldsV1:
        f:spec: {}
      manager: kubeadm
      operation: Update
      time: "2024-05-01T09:01:00Z"
    name: worker-a
    resourceVersion: "51240"
    uid: 0b1c2d3e-0000-4000-8000-000000000002
  spec:
    podCIDR: 10.244.1.0/24
  status:
    allocatable:
      cpu: 3920m
      ephemeral-storage: 61202244Ki
      hugepages-2Mi: "0"
      memory: 15214160Ki
      pods: "110"
      example.com/gpu: "2"
    conditions:
    - lastHeartbeatTime: "2024-05-02T10:00:00Z"
      lastTransitionTime: "2024-05-01T09:01:00Z"
      message: kubelet is posting ready status
      reason: KubeletReady
      status: "True"
      type: Ready
    images:
    - names:
      - docker.io/library/nginx@sha256:0f04e4f646a3f14bf31d8bc8d885b6c951fdcf42589d06845f64d18aec6a3c4d
      - docker.io/library/nginx:1.25
      sizeBytes: 70544635
    nodeInfo:
      kubeletVersion: v1.30.0
- apiVersion: v1
  kind: Node
  metadata:
    creationTimestamp: "2024-05-01T09:02:00Z"
    labels:
      kubernetes.io/arch: amd64
      kubernetes.io/hostname: ip-10-0-2-17
      kubernetes.io/os: linux
      topology.kubernetes.io/zone: zone-b
    managedFields:
    - apiVersion: v1
      fieldsType: FieldsV1
      fieldsV1:
        f:status: {}
      manager: kubelet
      operation: Update
      subresource: status
      time: "2024-05-02T10:00:00Z"
    name: worker-b
    resourceVersion: "51250"
    uid: 0b1c2d3e-0000-4000-8000-000000000003
  spec:
    unschedulable: true
    taints:
    - effect: NoSchedule
      key: node.kubernetes.io/unschedulable
      timeAdded: "2024-05-02T09:30:00Z"
    - effect: PreferNoSchedule
      key: dedicated
      value: batch
  status:
    allocatable:
      cpu: 3920m
      ephemeral-storage: 61202244Ki
      memory: 15214160Ki
      pods: "110"
    conditions:
    - lastHeartbeatTime: "2024-05-02T10:00:00Z"
      lastTransitionTime: "2024-05-01T09:02:00Z"
      message: kubelet is posting ready status
      reason: KubeletReady
      status: "True"
      type: Ready
- apiVersion: v1
  kind: Pod
  metadata:
    annotations:
      kubernetes.io/config.hash: 6a1b2c3d
      kubernetes.io/config.source: file
    creationTimestamp: "2024-05-01T09:00:30Z"
    labels:
      component: etcd
      tier: control-plane
    managedFields:
    - apiVersion: v1
      fieldsType: FieldsV1
      fieldsV1:
        f:status: {}
      manager: kubelet
      operation: Update
      time: "2024-05-01T09:00:40Z"
    name: etcd-cp-1
    namespace: kube-system
    ownerReferences:
    - apiVersion: v1
      controller: true
      kind: Node
      name: cp-1
      uid: 0b1c2d3e-0000-4000-8000-000000000001
    resourceVersion: "310"
    uid: 1a000000-0000-4000-8000-000000000001
  spec:
    containers:
    - command:
      - etcd
      - --advertise-client-urls=https://172.18.0.2:2379
      image: registry.k8s.io/etcd:3.5.12-0
      imagePullPolicy: IfNotPresent
      name: etcd
      resources:
        requests:
          cpu: 100m
          memory: 100Mi
      terminationMessagePath: /dev/termination-log
      terminationMessagePolicy: File
    dnsPolicy: ClusterFirst
    enableServiceLinks: true
    hostNetwork: true
    nodeName: cp-1
    preemptionPolicy: PreemptLowerPriority
    priority: 2000001000
    priorityClassName: system-node-critical
    restartPolicy: Always
    schedulerName: default-scheduler
    securityContext:
      seccompProfile:
        type: RuntimeDefault
    terminationGracePeriodSeconds: 30
    tolerations:
    - effect: NoExecute
      operator: Exists
  status:
    conditions:
    - lastProbeTime: null
      lastTransitionTime: "2024-05-01T09:00:40Z"
      status: "True"
      type: Ready
    hostIP: 172.18.0.2
    phase: Running
    podIP: 172.18.0.2
    qosClass: Burstable
    startTime: "2024-05-01T09:00:35Z"
- apiVersion: v1
  kind: Pod
  metadata:
    creationTimestamp: "2024-05-01T10:00:00Z"
    generateName: web-5d8f7c9b4-
    labels:
      app: web
      pod-template-hash: 5d8f7c9b4
    managedFields:
    - apiVersion: v1
      fieldsType: FieldsV1
      fieldsV1:
        f:metadata: {}
      manager: kube-controller-manager
      operation: Update
      time: "2024-05-01T10:00:00Z"
    name: web-5d8f7c9b4-x7k2p
    namespace: default
    ownerReferences:
    - apiVersion: apps/v1
      blockOwnerDeletion: true
      controller: true
      kind: ReplicaSet
      name: web-5d8f7c9b4
      uid: 2b000000-0000-4000-8000-000000000001
    resourceVersion: "4321"
    uid: 1a000000-0000-4000-8000-000000000002
  spec:
    containers:
    - image: nginx:1.25
      imagePullPolicy: IfNotPresent
      name: nginx
      ports:
      - containerPort: 80
        name: http
        protocol: TCP
      resources:
        limits:
          memory: 256Mi
        requests:
          cpu: 250m
          memory: 256Mi
      volumeMounts:
      - mountPath: /var/run/secrets/kubernetes.io/serviceaccount
        name: kube-api-access-abcde
        readOnly: true
    nodeName: worker-a
    preemptionPolicy: PreemptLowerPriority
    priority: 1000
    priorityClassName: high
    schedulerName: default-scheduler
    serviceAccountName: default
    tolerations:
    - effect: NoExecute
      key: node.kubernetes.io/not-ready
      operator: Exists
      tolerationSeconds: 300
    - effect: NoExecute
      key: node.kubernetes.io/unreachable
      operator: Exists
      tolerationSeconds: 300
    topologySpreadConstraints:
    - labelSelector:
        matchLabels:
          app: web
      maxSkew: 1
      topologyKey: topology.kubernetes.io/zone
      whenUnsatisfiable: ScheduleAnyway
    volumes:
    - name: kube-api-access-abcde
      projected:
        defaultMode: 420
        sources:
        - serviceAccountToken:
            expirationSeconds: 3607
            path: token
  status:
    conditions:
    - lastProbeTime: null
      lastTransitionTime: "2024-05-01T10:00:05Z"
      status: "True"
      type: Ready
    containerStatuses:
    - containerID: containerd://abc
      image: docker.io/library/nginx:1.25
      name: nginx
      ready: true
      restartCount: 0
      started: true
      state:
        running:
          startedAt: "2024-05-01T10:00:04Z"
    hostIP: 172.18.0.3
    phase: Running
    podIP: 10.244.1.5
    qosClass: Burstable
    startTime: "2024-05-01T10:00:01Z"
- apiVersion: v1
  kind: Pod
  metadata:
    creationTimestamp: "2024-05-01T10:00:00Z"
    labels:
      app: web
      pod-template-hash: 5d8f7c9b4
    name: web-5d8f7c9b4-q9z4m
    namespace: default
    ownerReferences:
    - apiVersion: apps/v1
      blockOwnerDeletion: true
      controller: true
      kind: ReplicaSet
      name: web-5d8f7c9b4
      uid: 2b000000-0000-4000-8000-000000000001
  spec:
    containers:
    - image: nginx:1.25
      name: nginx
      ports:
      - containerPort: 80
        name: http
        protocol: TCP
      resources:
        requests:
          cpu: 250m
          memory: 256Mi
    nodeName: worker-b
    preemptionPolicy: PreemptLowerPriority
    priority: 1000
    priorityClassName: high
    tolerations:
    - effect: NoExecute
      key: node.kubernetes.io/not-ready
      operator: Exists
      tolerationSeconds: 300
    topologySpreadConstraints:
    - labelSelector:
        matchLabels:
          app: web
      maxSkew: 1
      topologyKey: topology.kubernetes.io/zone
      whenUnsatisfiable: ScheduleAnyway
  status:
    phase: Running
    startTime: "2024-05-01T10:00:02Z"
- apiVersion: v1
  kind: Pod
  metadata:
    creationTimestamp: "2024-05-02T09:59:00Z"
    labels:
      app: web
      pod-template-hash: 5d8f7c9b4
    name: web-5d8f7c9b4-pend1
    namespace: default
    ownerReferences:
    - apiVersion: apps/v1
      controller: true
      kind: ReplicaSet
      name: web-5d8f7c9b4
      uid: 2b000000-0000-4000-8000-000000000001
  spec:
    containers:
    - image: nginx:1.25
      name: nginx
      resources:
        requests:
          cpu: 250m
    priority: 1000
    priorityClassName: high
  status:
    conditions:
    - lastTransitionTime: "2024-05-02T09:59:01Z"
      message: '0/3 nodes are available: 3 Insufficient cpu.'
      reason: Unschedulable
      status: "False"
      type: PodScheduled
    phase: Pending
- apiVersion: v1
  kind: Pod
  metadata:
    labels:
      app: node-exporter
      controller-revision-hash: 6d9f8b
      pod-template-generation: "1"
    name: node-exporter-m2x8d
    namespace: monitoring
    ownerReferences:
    - apiVersion: apps/v1
      blockOwnerDeletion: true
      controller: true
      kind: DaemonSet
      name: node-exporter
      uid: 2b000000-0000-4000-8000-000000000002
  spec:
    affinity:
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchFields:
            - key: metadata.name
              operator: In
              values:
              - worker-a
    containers:
    - image: quay.io/prometheus/node-exporter:v1.8.0
      name: node-exporter
      ports:
      - containerPort: 9100
        hostPort: 9100
        name: metrics
        protocol: TCP
      resources:
        requests:
          cpu: 10m
          memory: 24Mi
    hostNetwork: true
    nodeName: worker-a
    nodeSelector:
      kubernetes.io/os: linux
    priority: 0
    tolerations:
    - operator: Exists
  status:
    phase: Running
    startTime: "2024-05-01T09:05:00Z"
- apiVersion: v1
  kind: Pod
  metadata:
    labels:
      app: db
      apps.kubernetes.io/pod-index: "0"
      statefulset.kubernetes.io/pod-name: db-0
    name: db-0
    namespace: default
    ownerReferences:
    - apiVersion: apps/v1
      blockOwnerDeletion: true
      controller: true
      kind: StatefulSet
      name: db
      uid: 2b000000-0000-4000-8000-000000000003
  spec:
    containers:
    - image: postgres:16
      name: postgres
      resources:
        requests:
          cpu: "1"
          memory: 2Gi
    initContainers:
    - image: busybox:1.36
      name: init-perms
      resources:
        requests:
          cpu: 50m
    - image: envoyproxy/envoy:v1.30.1
      name: proxy
      restartPolicy: Always
      resources:
        requests:
          cpu: 100m
          memory: 64Mi
    nodeName: worker-b
    priority: 0
    volumes:
    - name: data
      persistentVolumeClaim:
        claimName: data-db-0
    - configMap:
        defaultMode: 420
        name: db-config
      name: config
  status:
    phase: Running
    startTime: "2024-05-01T10:30:00Z"
- apiVersion: v1
  kind: Pod
  metadata:
    labels:
      batch.kubernetes.io/job-name: backup-28512345
      job-name: backup-28512345
    name: backup-28512345-7xq2v
    namespace: default
    ownerReferences:
    - apiVersion: batch/v1
      controller: true
      kind: Job
      name: backup-28512345
      uid: 2b000000-0000-4000-8000-000000000004
  spec:
    containers:
    - image: busybox:1.36
      name: backup
      resources:
        requests:
          cpu: 500m
    nodeName: worker-a
    priority: 0
    restartPolicy: Never
  status:
    phase: Succeeded
    startTime: "2024-05-02T03:00:00Z"
- apiVersion: v1
  kind: Service
  metadata:
    creationTimestamp: "2024-05-01T09:00:10Z"
    labels:
      component: apiserver
      provider: kubernetes
    name: kubernetes
    namespace: default
    resourceVersion: "200"
    uid: 3c000000-0000-4000-8000-000000000001
  spec:
    clusterIP: 10.96.0.1
    clusterIPs:
    - 10.96.0.1
    ports:
    - name: https
      port: 443
      protocol: TCP
      targetPort: 6443
    type: ClusterIP
  status:
    loadBalancer: {}
- apiVersion: v1
  kind: Service
  metadata:
    annotations:
      kubectl.kubernetes.io/last-applied-configuration: |
        {"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"default"}}
    name: web
    namespace: default
  spec:
    clusterIP: 10.96.12.34
    ports:
    - port: 80
      protocol: TCP
      targetPort: http
    selector:
      app: web
    type: ClusterIP
  status:
    loadBalancer: {}
- apiVersion: apps/v1
  kind: ReplicaSet
  metadata:
    annotations:
      deployment.kubernetes.io/desired-replicas: "2"
      deployment.kubernetes.io/revision: "1"
    labels:
      app: web
      pod-template-hash: 5d8f7c9b4
    name: web-5d8f7c9b4
    namespace: default
    ownerReferences:
    - apiVersion: apps/v1
      blockOwnerDeletion: true
      controller: true
      kind: Deployment
      name: web
      uid: 2b000000-0000-4000-8000-000000000010
  spec:
    replicas: 3
    selector:
      matchLabels:
        app: web
        pod-template-hash: 5d8f7c9b4
    template:
      metadata:
        labels:
          app: web
          pod-template-hash: 5d8f7c9b4
      spec:
        containers:
        - image: nginx:1.25
          name: nginx
  status:
    availableReplicas: 2
    fullyLabeledReplicas: 3
    observedGeneration: 1
    readyReplicas: 2
    replicas: 3
- apiVersion: apps/v1
  kind: StatefulSet
  metadata:
    name: db
    namespace: default
  spec:
    replicas: 1
    selector:
      matchLabels:
        app: db
    serviceName: db
    template:
      metadata:
        labels:
          app: db
  status:
    replicas: 1
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web
    namespace: default
  spec:
    selector:
      matchLabels:
        app: web
- apiVersion: policy/v1
  kind: PodDisruptionBudget
  metadata:
    name: web-pdb
    namespace: default
  spec:
    minAvailable: 1
    selector:
      matchLabels:
        app: web
  status:
    conditions:
    - lastTransitionTime: "2024-05-01T10:00:10Z"
      message: ""
      observedGeneration: 1
      reason: SufficientPods
      status: "True"
      type: DisruptionAllowed
    currentHealthy: 2
    desiredHealthy: 1
    disruptionsAllowed: 1
    expectedPods: 2
    observedGeneration: 1
- apiVersion: scheduling.k8s.io/v1
  description: Mission critical web tier.
  kind: PriorityClass
  metadata:
    name: high
    resourceVersion: "900"
  preemptionPolicy: PreemptLowerPriority
  value: 1000
- apiVersion: scheduling.k8s.io/v1
  description: Used for system critical pods that must run in the cluster, but can be moved.
  kind: PriorityClass
  metadata:
    generation: 1
    name: system-cluster-critical
  preemptionPolicy: PreemptLowerPriority
  value: 2000000000
- apiVersion: scheduling.k8s.io/v1
  description: Used for system critical pods that must not be moved from their current node.
  kind: PriorityClass
  metadata:
    generation: 1
    name: system-node-critical
  preemptionPolicy: PreemptLowerPriority
  value: 2000001000
kind: List
metadata:
  resourceVersion: ""
"""

EXPECTED = """\
# Imported by `kspread import` from dump.yaml: 3 node(s), 5 pod(s), 3 owner(s), 1 PDB(s), 1
# priority class(es).
# Left out: 1 pending pod(s) neither bound nor nominated, 1 finished pod(s) (Succeeded or Failed),
# 1 Service(s) without a selector (they select no pod).
# Search: the case has no `profile`, so kspread searches every node (percentageOfNodesToScore:
# 100); a default kube-scheduler 1.30 does too on 3 node(s).
# Only what kube-scheduler reads is kept. Replace the placeholder `pod` below with the pod
# to schedule, then fill `expect` with: kspread run --update THIS_FILE
apiVersion: kspread/v1
kind: Case
name: dump
source: dump.yaml
version: "1.30"
nodes:
- name: cp-1
  labels:
    beta.kubernetes.io/arch: amd64
    beta.kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    kubernetes.io/os: linux
    node-role.kubernetes.io/control-plane: ""
    topology.kubernetes.io/zone: zone-a
  allocatable: {cpu: "2", ephemeral-storage: 61202244Ki, memory: 3930460Ki, pods: "110"}
  taints: [{key: node-role.kubernetes.io/control-plane, effect: NoSchedule}]
  images:
  - names:
    - registry.k8s.io/etcd@sha256:44a8e24dcbba3470ee1fee21d5e88d128c936e9b55d4bc51fbef8086f8ed123b
    - registry.k8s.io/etcd:3.5.12-0
    sizeBytes: 57236178
- name: worker-a
  labels:
    kubernetes.io/arch: amd64
    kubernetes.io/os: linux
    topology.kubernetes.io/zone: zone-a
    disktype: ssd
  allocatable:
    cpu: 3920m
    ephemeral-storage: 61202244Ki
    memory: 15214160Ki
    pods: "110"
    example.com/gpu: "2"
  images:
  - names:
    - docker.io/library/nginx@sha256:0f04e4f646a3f14bf31d8bc8d885b6c951fdcf42589d06845f64d18aec6a3c4d
    - docker.io/library/nginx:1.25
    sizeBytes: 70544635
- name: worker-b
  labels:
    kubernetes.io/arch: amd64
    kubernetes.io/hostname: ip-10-0-2-17
    kubernetes.io/os: linux
    topology.kubernetes.io/zone: zone-b
  allocatable: {cpu: 3920m, ephemeral-storage: 61202244Ki, memory: 15214160Ki, pods: "110"}
  taints:
  - {key: node.kubernetes.io/unschedulable, effect: NoSchedule}
  - {key: dedicated, value: batch, effect: PreferNoSchedule}
  unschedulable: true
pods:
- name: etcd-cp-1
  namespace: kube-system
  node: cp-1
  labels: {component: etcd, tier: control-plane}
  priority: 2000001000
  priorityClassName: system-node-critical
  startTime: "2024-05-01T09:00:35Z"
  tolerations: [{operator: Exists, effect: NoExecute}]
  containers:
  - name: etcd
    image: registry.k8s.io/etcd:3.5.12-0
    resources: {requests: {cpu: 100m, memory: 100Mi}}
- name: web-5d8f7c9b4-x7k2p
  node: worker-a
  labels: {app: web, pod-template-hash: 5d8f7c9b4}
  controller: {kind: ReplicaSet, name: web-5d8f7c9b4}
  priority: 1000
  priorityClassName: high
  startTime: "2024-05-01T10:00:01Z"
  tolerations:
  - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
  - key: node.kubernetes.io/unreachable
    operator: Exists
    effect: NoExecute
    tolerationSeconds: 300
  topologySpreadConstraints:
  - labelSelector: {matchLabels: {app: web}}
    maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: ScheduleAnyway
  containers:
  - {name: nginx, image: "nginx:1.25", resources: {requests: {cpu: 250m, memory: 256Mi}}}
- name: web-5d8f7c9b4-q9z4m
  node: worker-b
  labels: {app: web, pod-template-hash: 5d8f7c9b4}
  controller: {kind: ReplicaSet, name: web-5d8f7c9b4}
  priority: 1000
  priorityClassName: high
  startTime: "2024-05-01T10:00:02Z"
  tolerations:
  - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
  topologySpreadConstraints:
  - labelSelector: {matchLabels: {app: web}}
    maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: ScheduleAnyway
  containers:
  - {name: nginx, image: "nginx:1.25", resources: {requests: {cpu: 250m, memory: 256Mi}}}
- name: node-exporter-m2x8d
  namespace: monitoring
  node: worker-a
  labels: {app: node-exporter, controller-revision-hash: 6d9f8b, pod-template-generation: "1"}
  controller: {kind: DaemonSet, name: node-exporter}
  startTime: "2024-05-01T09:05:00Z"
  nodeSelector: {kubernetes.io/os: linux}
  tolerations: [{operator: Exists}]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [worker-a]}]}]
  containers:
  - name: node-exporter
    image: quay.io/prometheus/node-exporter:v1.8.0
    resources: {requests: {cpu: 10m, memory: 24Mi}}
    ports: [{containerPort: 9100, hostPort: 9100}]
- name: db-0
  node: worker-b
  labels: {app: db, apps.kubernetes.io/pod-index: "0", statefulset.kubernetes.io/pod-name: db-0}
  controller: {kind: StatefulSet, name: db}
  startTime: "2024-05-01T10:30:00Z"
  initContainers:
  - {name: init-perms, image: "busybox:1.36", resources: {requests: {cpu: 50m}}}
  - name: proxy
    image: envoyproxy/envoy:v1.30.1
    resources: {requests: {cpu: 100m, memory: 64Mi}}
    restartPolicy: Always
  containers:
  - {name: postgres, image: "postgres:16", resources: {requests: {cpu: "1", memory: 2Gi}}}
  volumes: [{name: data, persistentVolumeClaim: {claimName: data-db-0}}]
owners:
- {kind: Service, name: web, selector: {app: web}}
- kind: ReplicaSet
  name: web-5d8f7c9b4
  selector: {matchLabels: {app: web, pod-template-hash: 5d8f7c9b4}}
- {kind: StatefulSet, name: db, selector: {matchLabels: {app: db}}}
pdbs:
- {name: web-pdb, selector: {matchLabels: {app: web}}, disruptionsAllowed: 1}
priorityClasses:
- {name: high, value: 1000}
# PLACEHOLDER: replace with the pod to schedule (any pod shorthand: labels, requests,
# affinity, tolerations, ...), and add a `profile` to test other plugins than the
# version's default profile. `kspread run --update` then fills `expect`.
pod: {name: incoming}
expect: {}
"""

PLACEHOLDER = "pod: {name: incoming}\nexpect: {}\n"
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"pods": "110"}}}


def _import(tmp_path: Path, text: str = DUMP, name: str = "dump.yaml", **kw) -> tuple[str, list[str]]:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    warnings: list[str] = []
    out = importer.import_snapshot(str(p), warn=warnings.append, **kw)
    return out, warnings


def _load_one(path: Path):
    res = read_file(path)
    assert res.error is None, res.error
    assert len(res.docs) == 1
    return res.docs[0]


# ---- the case produced ------------------------------------------------------------------


def test_exact_case(tmp_path):
    out, warnings = _import(tmp_path)
    assert out == EXPECTED
    assert warnings == [("skipped 1 Deployment object(s): the scheduler reads the ReplicaSets a Deployment owns, "
                         "from the dump"),
                        # db-0's claim is not in the dump
                        importer.missing_claims_note([("default", "data-db-0")])]


def test_written_yaml_reads_back_as_the_data(tmp_path):
    out, _ = _import(tmp_path)
    data = yaml.safe_load(out)
    assert data["version"] == "1.30"  # the nodes' kubeletVersion
    assert data["expect"] == {} and data["pod"] == {"name": "incoming"}
    assert [n["name"] for n in data["nodes"]] == ["cp-1", "worker-a", "worker-b"]
    assert [p["name"] for p in data["pods"]] == ["etcd-cp-1", "web-5d8f7c9b4-x7k2p", "web-5d8f7c9b4-q9z4m",
                                                 "node-exporter-m2x8d", "db-0"]
    assert data["nodes"][1]["allocatable"]["pods"] == "110"  # strings stay strings
    assert data["pods"][3]["labels"]["pod-template-generation"] == "1"
    assert "managedFields" not in out and "annotations" not in out and "conditions" not in out


def test_loads_validates_and_runs(tmp_path):
    out, _ = _import(tmp_path)
    case_text = out.replace(PLACEHOLDER, textwrap.dedent("""\
        profile:
          filter: [NodeUnschedulable, TaintToleration, NodeResourcesFit]
          postFilter: [DefaultPreemption]
        pod: {name: new, labels: {app: web}, priority: 2000, requests: {cpu: 3700m}}
        expect:
          feasible: []
          filter:
            cp-1: UnschedulableAndUnresolvable
            worker-a: {code: Unschedulable, reason: Insufficient cpu}
            worker-b: UnschedulableAndUnresolvable
          preemption: {node: worker-a, victims: [web-5d8f7c9b4-x7k2p]}
        """))
    assert case_text != out
    p = tmp_path / "case.yaml"
    p.write_text(case_text, encoding="utf-8")
    doc = _load_one(p)
    case = load_case(doc)
    assert [n.name for n in case.cluster.nodes] == ["cp-1", "worker-a", "worker-b"]
    assert {q.key for q in case.cluster.pods} == {
        "kube-system/etcd-cp-1", "web-5d8f7c9b4-x7k2p", "web-5d8f7c9b4-q9z4m",
        "monitoring/node-exporter-m2x8d", "db-0"}
    v = check(doc)
    assert v.passed, v.message
    assert cli_main(["validate", str(p)]) == 0


def test_placeholder_case_loads(tmp_path):
    out, _ = _import(tmp_path)
    p = tmp_path / "case.yaml"
    p.write_text(out, encoding="utf-8")
    case = load_case(_load_one(p))
    assert [q.name for q in case.incoming] == ["incoming"]
    assert case.expect == {}


def test_update_fills_expect(tmp_path, capsys):
    out, _ = _import(tmp_path)
    p = tmp_path / "case.yaml"
    p.write_text(out.replace(PLACEHOLDER, "profile: {filter: [NodeUnschedulable, TaintToleration, "
                                          "NodeResourcesFit]}\npod: {name: new, requests: {cpu: 3500m}}\n"
                                          "expect: {}\n"), encoding="utf-8")
    assert cli_main(["run", "--update", str(p)]) == 0
    data = yaml.safe_load(p.read_text(encoding="utf-8"))
    assert data["expect"] == {"selected": "worker-a"}  # what answers the case's question
    assert check(_load_one(p)).passed


def _normalized_cluster(case):
    """The parts of a cluster the importer may write differently with the same meaning:
    zero allocatable amounts, container ports without a host port, Services without a
    selector, pod order."""
    c = case.cluster
    nodes = [asdict(replace(n, allocatable={k: v for k, v in n.allocatable.items() if v})) for n in c.nodes]
    pods = {}
    for p in c.pods:
        pods[p.key] = asdict(replace(p, containers=tuple(
            replace(k, ports=tuple(x for x in k.ports if x.host_port > 0)) for k in p.containers)))
    services = [s for s in c.services if s.selector is not None]
    return nodes, pods, services, c.replication_controllers, c.replica_sets, c.stateful_sets, c.pdbs, \
        c.priority_classes, c.namespaces


def test_same_cluster_as_the_raw_objects(tmp_path):
    """The imported case reads the cluster exactly as `objects:` holding the dump would
    (the objects a case cannot hold raw taken out: the mirror pod's Node owner, the
    system priority classes, and pending pods, which the scheduler does not see)."""
    dump = yaml.safe_load(DUMP)
    keep = [o for o in dump["items"]
            if o["kind"] != "Deployment" and o["metadata"]["name"] not in (
                "etcd-cp-1", "web-5d8f7c9b4-pend1", "system-cluster-critical", "system-node-critical")]
    dump["items"] = keep
    small = yaml.safe_dump(dump)
    out, _ = _import(tmp_path, small)
    incoming = "pod: {name: new, labels: {app: web}}\nexpect: {}\n"
    a = tmp_path / "imported.yaml"
    a.write_text(out.replace(PLACEHOLDER, incoming), encoding="utf-8")
    b = tmp_path / "raw.yaml"
    b.write_text("apiVersion: kspread/v1\nkind: Case\nversion: \"1.30\"\n"
                 + yaml.safe_dump({"objects": [dump]}) + incoming, encoding="utf-8")
    ca, cb = load_case(_load_one(a)), load_case(_load_one(b))
    assert _normalized_cluster(ca) == _normalized_cluster(cb)
    assert "objects" not in out  # db-0's claim is a shorthand volume


# ---- input forms ------------------------------------------------------------------------------


def test_json_dump_gives_the_same_case(tmp_path):
    as_json = json.dumps(yaml.safe_load(DUMP), indent=2)
    out, _ = _import(tmp_path, as_json, name="dump.json")
    assert out == EXPECTED.replace("from dump.yaml:", "from dump.json:").replace("source: dump.yaml",
                                                                                "source: dump.json")


def test_several_documents_give_the_same_case(tmp_path):
    items = yaml.safe_load(DUMP)["items"]
    multi = "".join("---\n" + yaml.safe_dump(o, sort_keys=False) for o in items)
    out, _ = _import(tmp_path, multi)
    assert out == EXPECTED


def test_stdin(tmp_path, monkeypatch, capsys):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(DUMP))
    assert cli_main(["import", "-"]) == 0
    out = capsys.readouterr().out
    assert "\nsource: stdin\n" in out and "\nname: stdin\n" in out


def test_strip_noise_keeps_structure():
    text = textwrap.dedent("""\
        items:
        - metadata:
            annotations:
              a: |
                multi
                  line
              b: "x"
            managedFields:
            - manager: kubelet
              fieldsV1:
                f:metadata: {}
            -
              manager: other
            name: n1
            labels: {annotations: x}
          spec: {}
        """)
    assert yaml.safe_load(importer.strip_noise(text)) == {
        "items": [{"metadata": {"name": "n1", "labels": {"annotations": "x"}}, "spec": {}}]}


def test_collapse_replicas_only_when_exactly_equivalent():
    a = {"node": "n1", "labels": {"app": "c"}}
    pods = [{"name": "c-0", **a}, {"name": "c-1", **a}, {"name": "c-2", **a},  # collapsed
            {"name": "d-0", **a}, {"name": "d-1", "node": "n2", "labels": {"app": "c"}},  # differ
            {"name": "e-1", **a}, {"name": "e-2", **a},  # not from 0
            {"name": "f-0", **a}, {"name": "g", **a}, {"name": "f-1", **a},  # not adjacent
            {"name": "h-00", **a}, {"name": "h-01", **a}]  # not the replicas names
    assert importer.collapse_replicas(pods) == [
        {"name": "c", "replicas": 3, **a}, *pods[3:]]


def test_replicas_in_an_imported_case(tmp_path):
    def pod(name):
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                                "labels": {"app": "cache"}},
                "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "redis:7"}]},
                "status": {"phase": "Running"}}

    dump = {"apiVersion": "v1", "kind": "List", "items": [
        NODE, pod("cache-0"), pod("cache-1"), pod("cache-2"), pod("other")]}
    out, _ = _import(tmp_path, yaml.safe_dump(dump))
    assert yaml.safe_load(out)["pods"] == [
        {"name": "cache", "replicas": 3, "node": "n1", "labels": {"app": "cache"},
         "containers": [{"name": "c", "image": "redis:7"}]},
        {"name": "other", "node": "n1", "labels": {"app": "cache"},
         "containers": [{"name": "c", "image": "redis:7"}]}]
    p = tmp_path / "case.yaml"
    p.write_text(out, encoding="utf-8")
    case = load_case(_load_one(p))
    assert [q.name for q in case.cluster.pods] == ["cache-0", "cache-1", "cache-2", "other"]


def test_version_option(tmp_path):
    for given in ("1.28", "v1.28.2", "1.28.0"):
        out, _ = _import(tmp_path, version=given)
        assert '\nversion: "1.28"\n' in out


def test_unusual_strings_round_trip():
    data = {"a": ["yes", "no", "on", "null", "~", "", "1.30", "0x1f", "1e3", ".inf", "2024-01-01", "true",
                  "a: b", "#x", "- x", "@x", "*x", "&x", "!x", "%x", "`x", "'x", '"x', "x\ny", "ü", "x,y",
                  "{x}", "[x]", "x:", ":x", "a:b", "-", "?", "x #y", " x", "x "],
            "k: v": {"nested": [{"deep": "a:b"}]}, "": 1, "1": True, 2: None}
    text = importer._dump(data)
    assert yaml.safe_load(text) == data


# ---- what is left out or adjusted -----------------------------------------------------------------


def _mini(*items) -> str:
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [NODE, *items]})


def test_pod_on_a_node_the_dump_lacks_is_left_out(tmp_path):
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": {"nodeName": "gone"},
           "status": {"phase": "Running"}}
    out, warnings = _import(tmp_path, _mini(pod))
    assert "\npods:" not in out
    assert warnings == ["pod default/p is bound to node gone, which the dump lacks: left out"]


def test_nominated_pending_pod_is_kept(tmp_path):
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": {"priority": 5},
           "status": {"phase": "Pending", "nominatedNodeName": "n1"}}
    out, _ = _import(tmp_path, _mini(pod))
    assert "- {name: p, priority: 5, nominatedNode: n1}\n" in out


def test_missing_priority_class_keeps_the_priority(tmp_path):
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"nodeName": "n1", "priority": 500, "priorityClassName": "deleted"},
           "status": {"phase": "Running"}}
    out, warnings = _import(tmp_path, _mini(pod))
    assert "- {name: p, node: n1, priority: 500}\n" in out
    assert len(warnings) == 1 and "priorityClassName deleted left out" in warnings[0]
    p = tmp_path / "case.yaml"
    p.write_text(out, encoding="utf-8")
    assert load_case(_load_one(p)).cluster.pods[0].priority == 500


def test_global_default_class_makes_priority_explicit(tmp_path):
    pc = {"kind": "PriorityClass", "metadata": {"name": "dflt"}, "value": 100, "globalDefault": True,
          "preemptionPolicy": "Never"}
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"nodeName": "n1", "priority": 0}, "status": {"phase": "Running"}}
    out, _ = _import(tmp_path, _mini(pc, pod))
    assert "- {name: dflt, value: 100, globalDefault: true, preemptionPolicy: Never}\n" in out
    assert "- {name: p, node: n1, priority: 0}\n" in out
    p = tmp_path / "case.yaml"
    p.write_text(out, encoding="utf-8")
    assert load_case(_load_one(p)).cluster.pods[0].priority == 0


def test_unknown_kinds_are_skipped_with_a_warning(tmp_path):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    out, warnings = _import(tmp_path, _mini(cm, cm, {"kind": "Event", "metadata": {"name": "e"}}))
    assert warnings == ["skipped 2 ConfigMap object(s): kspread does not read this kind",
                        "skipped 1 Event object(s): kspread does not read this kind"]
    assert "ConfigMap" not in out


def test_pdb_with_disrupted_pods_stays_raw(tmp_path):
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
           "metadata": {"name": "b", "namespace": "default"},
           "spec": {"selector": {"matchLabels": {"app": "a"}}, "maxUnavailable": 1},
           "status": {"disruptionsAllowed": 0, "disruptedPods": {"a-1": "2024-05-01T10:00:00Z"}}}
    out, _ = _import(tmp_path, _mini(pdb))
    p = tmp_path / "case.yaml"
    p.write_text(out, encoding="utf-8")
    case = load_case(_load_one(p))
    assert case.cluster.pdbs[0].disrupted_pods == frozenset({"a-1"})
    assert case.cluster.pdbs[0].disruptions_allowed == 0


def test_namespaces_are_kept_when_the_dump_has_them(tmp_path):
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a", "labels": {
        "kubernetes.io/metadata.name": "team-a", "team": "a"}}}
    out, _ = _import(tmp_path, _mini(ns))
    assert "namespaces:\n- {name: team-a, labels: {kubernetes.io/metadata.name: team-a, team: a}}\n" in out


# ---- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, message", [
    ("", "is empty"),
    ("just a string\n", "is not a kubectl dump"),
    ("foo: bar\n", "is not a kubectl dump: expected a `kind: List` with `items`"),
    ("kind: List\nitems: {a: 1}\n", "`items` is not a list"),
    ("kind: List\nitems:\n- 3\n", "items[0] is not a mapping"),
    ("apiVersion: kspread/v1\nkind: Case\nnodes: [n1]\n", "is a kspread case, not a kubectl dump"),
    ("kind: List\nitems: [\n", "invalid YAML"),
])
def test_not_a_dump(tmp_path, text, message):
    p = tmp_path / "bad.yaml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(importer.ImportFailed, match=None) as e:
        importer.import_snapshot(str(p), warn=lambda m: None)
    assert message in str(e.value)


def test_invalid_json(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{"kind": "List", "items": [}', encoding="utf-8")
    with pytest.raises(importer.ImportFailed, match="invalid JSON"):
        importer.import_snapshot(str(p))


def test_cli_errors_are_messages_not_tracebacks(tmp_path, capsys):
    assert cli_main(["import", str(tmp_path / "missing.yaml")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("kspread import: error: ") and "cannot read the file" in err
    assert "Traceback" not in err
    (tmp_path / "d.yaml").write_text(DUMP, encoding="utf-8")
    assert cli_main(["import", str(tmp_path / "d.yaml"), "--version", "1.5"]) == 1
    assert "unsupported version" in capsys.readouterr().err


def test_cli_output_file_and_force(tmp_path, capsys):
    dump = tmp_path / "dump.yaml"
    dump.write_text(DUMP, encoding="utf-8")
    out = tmp_path / "case.yaml"
    assert cli_main(["import", str(dump), "-o", str(out)]) == 0
    cap = capsys.readouterr()
    assert cap.out == ""
    assert f"wrote {out}" in cap.err and "skipped 1 Deployment" in cap.err
    assert out.read_text(encoding="utf-8") == EXPECTED
    out.write_text("mine\n", encoding="utf-8")
    assert cli_main(["import", str(dump), "-o", str(out)]) == 1
    assert "exists; use --force" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == "mine\n"
    assert cli_main(["import", str(dump), "-o", str(out), "--force"]) == 0
    assert out.read_text(encoding="utf-8") == EXPECTED


def test_cli_stdout(tmp_path, capsys):
    dump = tmp_path / "dump.yaml"
    dump.write_text(DUMP, encoding="utf-8")
    assert cli_main(["import", str(dump), "--version", "1.29"]) == 0
    assert capsys.readouterr().out == EXPECTED.replace('version: "1.30"', 'version: "1.29"').replace(
        "kube-scheduler 1.30", "kube-scheduler 1.29")
    assert importer.main([str(dump)]) == 0
    assert capsys.readouterr().out == EXPECTED


def test_terminating_pod_and_system_class_outside_kube_system_before_1_17(tmp_path):
    pod = {"kind": "Pod",
           "metadata": {"name": "p", "namespace": "default", "deletionTimestamp": "2024-05-02T10:00:00Z"},
           "spec": {"nodeName": "n1", "priority": 2000000000, "priorityClassName": "system-cluster-critical"},
           "status": {"phase": "Running"}}
    out, warnings = _import(tmp_path, _mini(pod), version="1.16")
    # up to 1.16 admission rejects the system classes outside kube-system: the pod keeps its priority
    assert "- {name: p, node: n1, priority: 2000000000, terminating: true}\n" in out
    assert len(warnings) == 1 and "priorityClassName system-cluster-critical left out" in warnings[0]
    p = tmp_path / "case.yaml"
    p.write_text(out, encoding="utf-8")
    case = load_case(_load_one(p))
    assert case.cluster.pods[0].terminating and case.cluster.pods[0].priority == 2000000000
    out, warnings = _import(tmp_path, _mini(pod), version="1.17")
    assert "priorityClassName: system-cluster-critical" in out and warnings == []


def test_an_object_kspread_rejects_is_left_out_with_a_warning(tmp_path):
    bad = {"kind": "Pod", "metadata": {"name": "p", "labels": {"app": "has space"}},
           "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}}
    good = {"kind": "Pod", "metadata": {"name": "q"}, "spec": {"nodeName": "n1"},
            "status": {"phase": "Running"}}
    out, warnings = _import(tmp_path, _mini(bad, good))
    assert "\npods:\n- {name: q, node: n1}\n" in out
    assert len(warnings) == 1 and warnings[0].startswith("pods p: left out, kspread rejects it: labels.app: ")


# ---- the pending pod as the question: --pod, --pending, version, summary --------------------------


def test_pod_option_makes_the_pending_pod_incoming_and_answers_why(tmp_path):
    out, _ = _import(tmp_path, pod="default/web-5d8f7c9b4-pend1")
    assert "PLACEHOLDER" not in out
    data = yaml.safe_load(out)
    assert data["pod"] == {"name": "web-5d8f7c9b4-pend1", "labels": {"app": "web", "pod-template-hash": "5d8f7c9b4"},
                           "controller": {"kind": "ReplicaSet", "name": "web-5d8f7c9b4"}, "priority": 1000,
                           "priorityClassName": "high",
                           "containers": [{"name": "nginx", "image": "nginx:1.25",
                                           "resources": {"requests": {"cpu": "250m"}}}]}
    assert all(p["name"] != "web-5d8f7c9b4-pend1" for p in data["pods"])
    assert "1 pending pod(s) to schedule" in out.splitlines()[0] + out.splitlines()[1]
    # the case runs as is, and the update fills its expect
    path = tmp_path / "why.yaml"
    path.write_text(out, encoding="utf-8")
    assert cli_main(["run", "--update", str(path)]) == 0
    filled = yaml.safe_load(path.read_text(encoding="utf-8"))["expect"]
    assert filled == {"selected": "worker-a"}  # what answers the case's question
    # why the other nodes cannot take it, when asked for
    path.write_text(out, encoding="utf-8")
    assert cli_main(["run", "--update", "--update-keys", "selected,filter", str(path)]) == 0
    filled = yaml.safe_load(path.read_text(encoding="utf-8"))["expect"]
    assert filled["selected"] == "worker-a"
    assert filled["filter"]["worker-b"] == {"code": "UnschedulableAndUnresolvable",
                                            "reason": "node(s) were unschedulable"}


def test_pod_option_errors(tmp_path):
    for ref, msg in (("default/nope", "the dump has no pod default/nope"),
                     ("default/web-5d8f7c9b4-q9z4m", "is not a pending pod of default-scheduler (bound to node"),
                     ("a/b/c", "expected NAMESPACE/NAME or NAME")):
        with pytest.raises(importer.ImportFailed, match=re.escape(msg)):
            _import(tmp_path, pod=ref)
    with pytest.raises(importer.ImportFailed, match="exclude each other"):
        _import(tmp_path, pod="x", pending=True)
    # a name without its namespace: the pods of that name elsewhere are named
    with pytest.raises(importer.ImportFailed) as e:
        _import(tmp_path, pod="etcd-cp-1")
    assert str(e.value) == ("the dump has no pod default/etcd-cp-1 (the dump has kube-system/etcd-cp-1: give --pod "
                            "NAMESPACE/NAME)")


def _pending_pod(name: str, created: str, **spec) -> dict:
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "creationTimestamp": created},
            "spec": {"containers": [{"name": "c"}], **spec}, "status": {"phase": "Pending"}}


def test_pending_option_makes_a_schedule_in_creation_order(tmp_path):
    dump = _mini(_pending_pod("late", "2024-05-01T10:00:00Z"), _pending_pod("early", "2024-05-01T09:00:00Z"),
                 _pending_pod("other", "2024-05-01T08:00:00Z", schedulerName="my-scheduler"),
                 _pending_pod("nominated", "2024-05-01T09:30:00Z", priority=5),
                 {"kind": "Pod", "metadata": {"name": "bound", "namespace": "default"},
                  "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}})
    dump = dump.replace("phase: Pending\n", "phase: Pending\n", 1)
    out, _ = _import(tmp_path, dump, pending=True)
    data = yaml.safe_load(out)
    assert [p["name"] for p in data["schedule"]] == ["early", "nominated", "late"]
    assert [p["name"] for p in data["pods"]] == ["bound"]
    assert "pod" not in data and data["expect"] == {}
    path = tmp_path / "all.yaml"
    path.write_text(out, encoding="utf-8")
    assert cli_main(["run", "--update", str(path)]) == 0
    assert yaml.safe_load(path.read_text(encoding="utf-8"))["expect"]["placements"] == {
        "early": "n1", "nominated": "n1", "late": "n1"}


def test_pending_option_without_pending_pods(tmp_path):
    with pytest.raises(importer.ImportFailed, match="no pending pod for default-scheduler"):
        _import(tmp_path, _mini(), pending=True)


def _kubelet_node(name: str, version: str) -> dict:
    return {"kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"pods": "110"}, "nodeInfo": {"kubeletVersion": version}}}


def test_version_from_the_kubelets(tmp_path):
    agree = yaml.safe_dump({"kind": "List", "items": [_kubelet_node("a", "v1.27.3"), _kubelet_node("b", "v1.27.1")]})
    out, warnings = _import(tmp_path, agree)
    assert '\nversion: "1.27"\n' in out and warnings == []
    differ = yaml.safe_dump({"kind": "List", "items": [_kubelet_node("a", "v1.26.0"), _kubelet_node("b", "v1.27.1")]})
    out, warnings = _import(tmp_path, differ)
    assert '\nversion: "1.27"\n' in out
    assert warnings == [("the nodes' kubelets run different versions (1.26, 1.27): the case takes the newest, 1.27; "
                         "give --version for the control plane's")]
    out, _ = _import(tmp_path, differ, version="1.25")
    assert '\nversion: "1.25"\n' in out
    old = yaml.safe_dump({"kind": "List", "items": [_kubelet_node("a", "v1.9.0")]})
    out, warnings = _import(tmp_path, old)
    assert '\nversion: "1.12"\n' in out and "1.9, which kspread does not model" in warnings[0]


def test_cli_summary_line_is_whole_and_counts_pdbs(tmp_path, capsys):
    pdb_raw = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "raw", "namespace": "default"},
               "spec": {"selector": {"matchLabels": {"app": "x"}}},
               "status": {"disruptionsAllowed": 0, "disruptedPods": {"p": "2024-01-01T00:00:00Z"}}}
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "plain", "namespace": "default"},
           "spec": {"selector": {"matchLabels": {"app": "y"}}}, "status": {"disruptionsAllowed": 1}}
    pvc_pod = {"kind": "Pod", "metadata": {"name": "db", "namespace": "default"},
               "spec": {"nodeName": "n1", "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "c"}}]},
               "status": {"phase": "Running"}}
    dump = tmp_path / "d.yaml"
    dump.write_text(_mini(pdb_raw, pdb, pvc_pod), encoding="utf-8")
    out = tmp_path / "c.yaml"
    assert cli_main(["import", str(dump), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"kspread import: wrote {out} (1 node(s), 1 pod(s), 0 owner(s), 2 PDB(s), 0 priority class(es))\n" in err


def test_pod_level_resources_are_imported(tmp_path):
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"nodeName": "n1", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "2"}},
                    "containers": [{"name": "c", "image": "x"}]},
           "status": {"phase": "Running"}}
    out, _ = _import(tmp_path, _mini(pod))
    assert '  resources: {limits: {cpu: "2"}, requests: {cpu: "2"}}\n' in out, out
    p = tmp_path / "case.yaml"
    p.write_text(out, encoding="utf-8")
    case = load_case(_load_one(p))
    assert case.cluster.pods[0].level_requests == {"cpu": 2000}
    assert case.cluster.pods[0].level_limits == {"cpu": 2000}


# ---- generated text stays what it says --------------------------------------------------------


@pytest.mark.parametrize("brk", ["\r", "\x85", "\u2028", "\u2029", "\n"])
def test_a_line_break_in_the_dump_name_cannot_inject_a_key(tmp_path, brk):
    name = f"dump{brk}schedule: [x]{brk}.yaml"
    out, _ = _import(tmp_path, name=name)
    esc = f"\\u{ord(brk):04x}"
    assert out.splitlines()[0] == (f"# Imported by `kspread import` from dump{esc}schedule: [x]{esc}.yaml: 3 node(s), "
                                   "5 pod(s), 3")
    data = yaml.safe_load(out)
    assert "schedule" not in data
    # a case name cannot hold a line break (it is printed in CI logs): the name has it as \uXXXX text,
    # the source keeps the file name
    assert (data["name"], data["source"]) == (f"dump{esc}schedule: [x]{esc}", name)
    quoted = {"\r": "\\r", "\n": "\\n"}.get(brk, esc)  # JSON's own escapes where it has one
    assert f'source: "dump{quoted}schedule: [x]{quoted}.yaml"\n' in out


def test_the_self_check_reads_the_rendered_text_back(tmp_path, monkeypatch):
    monkeypatch.setattr(importer, "comment_text", lambda s: s)  # as before: comment text written raw
    with pytest.raises(importer.ImportFailed) as e:
        _import(tmp_path, name="dump\u2028schedule: [x]\u2028.yaml")
    assert str(e.value).startswith("the written case would not read back as imported (a kspread bug): read ['.yaml', "
                                   "'apiVersion', 'expect', 'kind', 'name', 'nodes', ")


def test_a_file_name_that_is_not_utf8_is_written_with_a_replacement_character(tmp_path):
    name = b"caf\xe9.yaml".decode("utf-8", "surrogateescape")
    out, _ = _import(tmp_path, name=name)
    data = yaml.safe_load(out)
    assert (data["name"], data["source"]) == ("caf\ufffd", "caf\ufffd.yaml")


def test_strings_yaml_would_break_or_refuse_are_escaped():
    data = {"a": ["x\x85y", "x\u2028y", "x\u2029y", "x\x7fy", "x\x9fy", "\ufeffx", "x\ufffey", "ok \u00e9 \U0001f600"]}
    text = importer._dump(data)
    assert yaml.safe_load(text) == data
    assert text == ('a: ["x\\u0085y", "x\\u2028y", "x\\u2029y", "x\\u007fy", "x\\u009fy", "\\ufeffx", "x\\ufffey", '
                    '"ok \u00e9 \U0001f600"]\n')


def test_a_lone_surrogate_in_the_dump_is_refused(tmp_path):
    dump = json.loads(json.dumps(yaml.safe_load(DUMP)))
    dump["items"][0]["metadata"]["labels"] = {"x": "\ud800"}
    p = tmp_path / "d.json"
    p.write_text(json.dumps(dump, indent=1), encoding="utf-8")
    with pytest.raises(importer.ImportFailed) as e:
        importer.import_snapshot(str(p), warn=lambda m: None)
    line = next(i for i, t in enumerate(p.read_text().splitlines(), 1) if "\\ud800" in t)
    assert str(e.value) == (f"{p}:{line}: items[0].metadata.labels.x: invalid text: a lone surrogate escape (\\ud800 "
                            "to \\udfff, not a UTF-16 pair) is not a character")


def test_a_dump_that_is_not_utf8_names_the_line(tmp_path, capsys):
    p = tmp_path / "d.yaml"
    p.write_bytes(DUMP.encode() + b"# caf\xe9\n")
    assert cli_main(["import", str(p)]) == 1
    line = DUMP.count("\n") + 1
    assert capsys.readouterr().err == (f"kspread import: error: {p}:{line}: the dump is not UTF-8 text: byte 0xe9 on "
                                       "this line cannot be decoded\n")


@pytest.mark.parametrize(("n", "version", "search"), [
    (3, "1.30", "a default kube-scheduler 1.30 does too on 3 node(s)"),
    (1000, "1.30", ("a default kube-scheduler 1.30 stops its search at 420 feasible nodes of these 1000 and may "
                   "select another node: to test that search, give a `profile` with percentageOfNodesToScore: 0")),
    (1000, "1.13", ("a default kube-scheduler 1.13 stops its search at 500 feasible nodes of these 1000 and may "
                   "select another node: to test that search, give a `profile` with percentageOfNodesToScore: 50")),
])
def test_import_says_how_the_case_searches_the_nodes(tmp_path, capsys, n, version, search):
    items = [{"kind": "Node", "metadata": {"name": f"n{i}"}, "status": {"allocatable": {"cpu": "4", "pods": "110"}}}
             for i in range(n)]
    dump = tmp_path / "d.yaml"
    dump.write_text(yaml.safe_dump({"kind": "List", "items": items}), encoding="utf-8")
    out = tmp_path / "c.yaml"
    assert cli_main(["import", str(dump), "-o", str(out), "--version", version]) == 0
    note = ("the case has no `profile`, so kspread searches every node (percentageOfNodesToScore: 100); " + search)
    assert capsys.readouterr().err.endswith(f"kspread import: note: {note}\n")
    head = "".join(line[2:] for line in out.read_text().splitlines(keepends=True) if line.startswith("# "))
    assert f" Search: {note}. Only what kube-scheduler reads is kept." in " ".join(head.split())


# ---- owners the dump lacks (issue 26) ------------------------------------------------------------


def _owned_pod(name: str, ns: str, kind: str, owner: str, labels: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels or {"app": owner},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": kind, "name": owner,
                                              "uid": "u", "controller": True}]},
            "spec": {"nodeName": "n1", "containers": [{"name": "c"}]}, "status": {"phase": "Running"}}


MISSING_NOTE = (
    "the dump lacks 2 owner(s) that its pods name as their controller (ReplicaSet default/web-7d4f, StatefulSet "
    "data/db): default topology spreading (SelectorSpread, PodTopologySpread's system defaults) finds a pod's "
    "siblings through them, so where a new replica lands may differ from the cluster. The case is tagged "
    "imported-without-owners; import a dump that has them: " + importer._KUBECTL)


def test_a_dump_without_the_owners_its_pods_name_warns_and_marks_the_case(tmp_path):
    # `kubectl get nodes,pods -A -o yaml`: the pods' ReplicaSet and StatefulSet are not in it
    kept = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "api-1", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "api-1"}}}}
    dump = _mini(_owned_pod("web-7d4f-a", "default", "ReplicaSet", "web-7d4f"),
                 _owned_pod("web-7d4f-b", "default", "ReplicaSet", "web-7d4f"),
                 _owned_pod("db-0", "data", "StatefulSet", "db"),
                 _owned_pod("agent-x", "default", "DaemonSet", "agent"),  # no spreading reads a DaemonSet
                 _owned_pod("api-1-a", "default", "ReplicaSet", "api-1"), kept)
    out, warnings = _import(tmp_path, dump)
    assert warnings == [MISSING_NOTE]
    lines = out.splitlines()
    # the warning comes first, the kubectl command whole on its line
    assert lines[0] == "# WARNING: the dump lacks 2 owner(s) that its pods name as their controller (ReplicaSet"
    first = lines.index(next(x for x in lines if x.startswith("# Imported")))
    assert lines[first - 1] == "#   " + importer._KUBECTL
    assert " ".join(line[2:].strip() for line in lines[:first]) == "WARNING: " + MISSING_NOTE
    p = tmp_path / "case.yaml"
    p.write_text(out.replace("expect: {}", "expect: {selected: n1}"), encoding="utf-8")
    doc = _load_one(p)
    assert doc.data["tags"] == ["imported-without-owners"]
    assert doc.data["description"].startswith("Imported without 2 owner(s) its pods name as their controller")
    case = load_case(doc)
    assert case.tags == ["imported-without-owners"]
    # a failure report shows the description's first line; the JSON report, the tag
    p.write_text(out.replace("expect: {}", "expect: {unschedulable: true}"), encoding="utf-8")
    v = check(_load_one(p))
    assert not v.passed and ("\n  Imported without 2 owner(s) its pods name as their controller: default topology "
                             "spreading may place pods otherwise than the cluster does.\n") in v.message
    p.write_text(out.replace("expect: {}", "expect: {selected: n1}"), encoding="utf-8")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert cli_main(["run", "--json", str(p)]) == 0
    assert [e.get("tags") for e in json.loads(buf.getvalue())] == [["imported-without-owners"]]


def test_a_dump_with_every_owner_says_nothing_of_owners(tmp_path):
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "default"},
          "spec": {"selector": {"matchLabels": {"app": "web"}}}}
    out, warnings = _import(tmp_path, _mini(_owned_pod("web-a", "default", "ReplicaSet", "web"), rs))
    assert warnings == []
    assert "WARNING" not in out and "tags:" not in out and "description:" not in out


def test_the_owners_listed_are_bounded(tmp_path):
    pods = [_owned_pod(f"p{i}", "default", "ReplicaSet", f"rs{i:02}") for i in range(13)]
    _, warnings = _import(tmp_path, _mini(*pods))
    assert warnings[0].startswith("the dump lacks 13 owner(s) that its pods name as their controller (ReplicaSet "
                                  "default/rs00, ReplicaSet default/rs01, ")
    assert "ReplicaSet default/rs09, and 3 more): " in warnings[0] and "rs10" not in warnings[0]


def test_a_dump_without_nodes_warns(tmp_path):
    """`kubectl get pods -A -o yaml`: the case would have no node, every pod unschedulable."""
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": [{"name": "c"}]},
           "status": {"phase": "Pending"}}
    _, warnings = _import(tmp_path, yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [pod]}))
    assert warnings[0] == ("the dump has no Node: the case has no node, and no pod fits anywhere; import a dump "
                           "that has them: " + importer._KUBECTL)
    _, warnings = _import(tmp_path, _mini(pod))
    assert not any("no Node" in w for w in warnings)


def test_a_dump_without_the_claims_its_pods_use_warns(tmp_path):
    """`kubectl get nodes,pods -A -o yaml` holds no claim: the pending pod that uses one would be
    explained as rejected for the missing claim, so the import warns, naming each claim."""
    bound = {"kind": "Pod", "metadata": {"name": "db-0", "namespace": "data"},
             "spec": {"nodeName": "n1", "containers": [{"name": "c"}],
                      "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data-db-0"}}]},
             "status": {"phase": "Running"}}
    pending = {"kind": "Pod", "metadata": {"name": "train", "namespace": "default"},
               "spec": {"containers": [{"name": "c"}],
                        "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "scratch"}},
                                    {"name": "e", "emptyDir": {}}]},
               "status": {"phase": "Pending"}}
    _, warnings = _import(tmp_path, _mini(bound, pending), pod="default/train")
    assert warnings == [
        "the dump lacks 2 PersistentVolumeClaim(s) that its pods use (data/data-db-0, default/scratch): the volume "
        "plugins do not decide for those pods as the cluster's scheduler does (a pod to schedule that uses one is "
        "rejected for the missing claim); import a dump that has them: " + importer._KUBECTL]
    # the claim in the dump is not named (another namespace's of the same name does not count)
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "scratch", "namespace": "default"},
           "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    other = {**pvc, "metadata": {"name": "data-db-0", "namespace": "default"}}
    _, warnings = _import(tmp_path, _mini(bound, pending, pvc, other), pod="default/train")
    assert len(warnings) == 1 and "lacks 1 PersistentVolumeClaim(s) that its pods use (data/data-db-0):" in warnings[0]
    _, warnings = _import(tmp_path, _mini(bound, pending, pvc, {**pvc, "metadata": {
        "name": "data-db-0", "namespace": "data"}}), pod="default/train")
    assert warnings == []


def test_resize_status_is_imported(tmp_path):
    cond = {"type": "PodResizePending", "status": "True", "reason": "Deferred", "lastTransitionTime": "x"}
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x",
                                                      "resources": {"requests": {"cpu": "1"}}}]},
           "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}, cond],
                      "containerStatuses": [{"name": "c", "image": "x", "ready": True, "restartCount": 0,
                                             "resources": {"requests": {"cpu": "3"}},
                                             "allocatedResources": {"cpu": "3"}}]}}
    out, _ = _import(tmp_path, _mini(pod))
    data = yaml.safe_load(out)
    assert data["pods"][0]["status"] == {
        "conditions": [{"type": "PodResizePending", "status": "True", "reason": "Deferred"}],
        "containerStatuses": [{"name": "c", "resources": {"requests": {"cpu": "3"}},
                               "allocatedResources": {"cpu": "3"}}]}
    p = tmp_path / "case.yaml"
    p.write_text(out, encoding="utf-8")
    case = load_case(_load_one(p))
    assert case.cluster.pods[0].resize.containers[0].allocated == {"cpu": 3000}


# ---- gangs: 1.35's Workloads and 1.36's PodGroups kept, 1.37's refused -------------------------------

WORKLOAD = {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
            "metadata": {"name": "train", "namespace": "default", "uid": "u", "resourceVersion": "7"},
            "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "train"},
                     "podGroups": [{"name": "workers", "policy": {"gang": {"minCount": 2}}}]}}


GANG_NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
             "status": {"allocatable": {"cpu": "4", "pods": "110"}}}


def _gang_dump(*items) -> str:
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [GANG_NODE, *items]})


def _gang_pod(name, node=None, **spec):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "creationTimestamp": f"2026-01-01T00:00:0{name[-1]}Z"},
            "spec": {"schedulerName": "default-scheduler", **({"nodeName": node} if node else {}), **spec,
                     "containers": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}]},
            "status": {"phase": "Running" if node else "Pending"}}


def test_a_1_35_gang_keeps_its_workload_and_refs_and_turns_the_gates_on(tmp_path):
    """Dropping workloadRef would schedule the gang's pods one by one: w-1 would land where
    upstream holds it at Permit. The case keeps the Workload and the refs, and turns on the
    gates the refs prove (GenericWorkload) and the one a dump cannot show (GangScheduling),
    saying so."""
    ref = {"name": "train", "podGroup": "workers"}
    pods = [_gang_pod("w-1", workloadRef=ref), _gang_pod("w-2", workloadRef=ref)]
    out, warnings = _import(tmp_path, _gang_dump(WORKLOAD, *pods), version="1.35", pending=True)
    assert "featureGates: {GenericWorkload: true, GangScheduling: true}\n" in out
    assert ("- apiVersion: scheduling.k8s.io/v1alpha1\n  kind: Workload\n  metadata: {name: train}\n"
            "  spec: {podGroups: [{name: workers, policy: {gang: {minCount: 2}}}]}\n") in out
    assert out.count("workloadRef: {name: train, podGroup: workers}") == 2
    assert warnings == [importer.GANG_NOTE]
    assert "GangScheduling: false if your scheduler runs without it" in out.replace("\n# ", " ")  # the case too
    p = tmp_path / "case.yaml"
    p.write_text(out.replace("expect: {}", "expect: {placements: {w-1: null, w-2: null}}"), encoding="utf-8")
    # n1 has 4 CPUs: one worker fits, waits at Permit for the other, which fits nowhere
    v = check(_load_one(p))
    assert v.passed, v.message


def test_a_1_36_pod_group_keeps_its_podgroup_and_refs_and_turns_the_gates_on(tmp_path):
    """1.36: the PodGroups (v1alpha2, with their disruptionMode: the API server served it, so
    WorkloadAwarePreemption was on), the v1alpha2 Workloads and pods' schedulingGroup are kept,
    and the gates turned on; the case schedules the group in a pod group cycle. (The import
    used to leave disruptionMode out, counted as behind a gate kspread does not model.)"""
    pg = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
          "metadata": {"name": "pg", "namespace": "default", "uid": "u"},
          "spec": {"podGroupTemplateRef": {"workload": {"workloadName": "train", "podGroupTemplateName": "workers"}},
                   "schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": "Pod"},
          "status": {"conditions": []}}
    wl = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload", "metadata": {"name": "train"},
          "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}}]}}
    sg = {"podGroupName": "pg"}
    dump = _gang_dump(pg, wl, _gang_pod("w-1", schedulingGroup=sg), _gang_pod("w-2", schedulingGroup=sg))
    out, warnings = _import(tmp_path, dump, version="1.36", pending=True)
    assert "featureGates: {GenericWorkload: true, GangScheduling: true, WorkloadAwarePreemption: true}\n" in out
    doc = yaml.safe_load(out)
    assert [o for o in doc["objects"] if o["kind"] == "PodGroup"] == [{
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "pg"},
        "spec": {"podGroupTemplateRef": {"workload": {"workloadName": "train", "podGroupTemplateName": "workers"}},
                 "schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": "Pod"}}]
    assert [o["spec"] for o in doc["objects"] if o["kind"] == "Workload"] == [
        {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}}]}]
    assert out.count("schedulingGroup: {podGroupName: pg}") == 2
    assert warnings == [importer.GANG_NOTE]
    assert "WorkloadAwarePreemption, which" not in out.replace("\n# ", " ")
    p = tmp_path / "case.yaml"
    p.write_text(out.replace("expect: {}", "expect: {placements: {w-1: null, w-2: null}}"), encoding="utf-8")
    # n1 has 4 CPUs: one worker fits, the other nowhere; the gang binds nothing
    v = check(_load_one(p))
    assert v.passed, v.message


def test_a_1_36_pod_groups_topology_constraint_is_kept_with_its_gate(tmp_path):
    """A PodGroup's schedulingConstraints (served only with TopologyAwareWorkloadScheduling
    on) is kept and the gate turned on: the group's pods stay in one zone."""
    pg = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "pg"},
          "spec": {"schedulingPolicy": {"basic": {}},
                   "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]}}}
    sg = {"podGroupName": "pg"}
    dump = _gang_dump(pg, _gang_pod("w-1", schedulingGroup=sg), _gang_pod("w-2", schedulingGroup=sg))
    out, _ = _import(tmp_path, dump, version="1.36", pending=True)
    assert "featureGates: {GenericWorkload: true, GangScheduling: true, TopologyAwareWorkloadScheduling: true}\n" in out
    doc = yaml.safe_load(out)
    assert [o["spec"] for o in doc["objects"] if o["kind"] == "PodGroup"] == [pg["spec"]]
    assert "needs the alpha gate TopologyAwareWorkloadScheduling" not in out.replace("\n# ", " ")


@pytest.mark.parametrize("field", [{"schedulingGroup": {"podGroupName": "pg"}},
                                   {"workloadRef": {"name": "train", "podGroup": "workers"}}])
def test_1_37_pod_groups_are_refused_for_a_pod_to_schedule_and_dropped_from_bound_pods(tmp_path, field):
    pg = {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup", "metadata": {"name": "pg"}}
    dump = _gang_dump(pg, _gang_pod("a-1", node="n1", **field), _gang_pod("b-2", **field))
    out, _ = _import(tmp_path, dump, version="1.37")
    pods = yaml.safe_load(out)["pods"]
    assert [sorted(p) for p in pods] == [["containers", "name", "node"]]
    assert "featureGates" not in out
    assert "PodGroup(s) not of 1.36's scheduling.k8s.io/v1alpha2" in out.replace("\n# ", " ")
    assert "of bound or nominated pods, which kspread does not model in 1.37" in out.replace("\n# ", " ")
    with pytest.raises(importer.ImportFailed, match=r"pod default/b-2 names a pod group \(spec\.(schedulingGroup|"
                       r"workloadRef)\): kspread models 1\.35's gangs"):
        _import(tmp_path, dump, version="1.37", pod="default/b-2")


# ---- DRANodeAllocatableResources and DRAWorkloadResourceClaims (1.36) --------------------------

_NA_SLICE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-cpus"},
             "spec": {"driver": "cpu.example.com", "nodeName": "n1", "pool": {"name": "n1"},
                      "devices": [{"name": "cpu-0",
                                   "nodeAllocatableResourceMappings": {"cpu": {"allocationMultiplier": "2"}}}]}}
_NA_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "cpus"},
             "spec": {"selectors": [{"cel": {"expression": 'device.driver == "cpu.example.com"'}}]}}
_NA_CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "old-cpus-x7k2q", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "cpu", "exactly": {"deviceClassName": "cpus"}}]}},
             "status": {"allocation": {"devices": {"results": [{"request": "cpu", "driver": "cpu.example.com",
                                                                "pool": "n1", "device": "cpu-0"}]}},
                        "reservedFor": [{"resource": "pods", "name": "old", "uid": "u1"}]}}
_NA_STATUS = [{"resourceClaimName": "old-cpus-x7k2q", "containers": ["c"], "resources": {"cpu": "2"}}]


def _na_pod(version_status=_NA_STATUS):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "old", "namespace": "default"},
            "spec": {"nodeName": "n1",
                     "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "cpus"}]}}],
                     "resourceClaims": [{"name": "cpus", "resourceClaimTemplateName": "cpus"}]},
            "status": {"phase": "Running", "nodeAllocatableResourceClaimStatuses": version_status,
                       "resourceClaimStatuses": [{"name": "cpus", "resourceClaimName": "old-cpus-x7k2q"}]}}


def test_a_bound_pods_node_allocatable_statuses_are_kept_with_their_gate(tmp_path):
    """1.36: a bound pod's status.nodeAllocatableResourceClaimStatuses is kept (its claim by
    the name the controller made) and DRANodeAllocatableResources turned on (the API server
    stores the field only with it); the case counts the 2 cpu on n1: a pod of 1500m no longer
    fits its 4."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    dump = yaml.safe_dump({"apiVersion": "v1", "kind": "List",
                           "items": [node, _NA_CLASS, _NA_SLICE, _NA_CLAIM, _na_pod()]})
    out, warnings = _import(tmp_path, dump, version="1.36")
    assert "featureGates: {DRANodeAllocatableResources: true}\n" in out
    assert importer.NODE_ALLOC_NOTE in warnings
    doc = yaml.safe_load(out)
    old = next(p for p in doc["pods"] if p["name"] == "old")
    assert old["status"] == {"nodeAllocatableResourceClaimStatuses": _NA_STATUS}
    assert old["resourceClaims"] == [{"name": "cpus", "resourceClaimName": "old-cpus-x7k2q"}]
    p = tmp_path / "case.yaml"
    p.write_text(out.replace("pod: {name: incoming}", "pod: {name: incoming, requests: {cpu: 1500m}}")
                 .replace("expect: {}", "expect: {feasible: []}"), encoding="utf-8")
    v = check(_load_one(p))
    assert v.passed, v.message


def test_node_allocatable_statuses_of_another_version_are_left_out(tmp_path):
    """A 1.37 status (here in the mapping-list shape reported for later APIs), which kspread does
    not model: the pod is kept without the field, counted."""
    status = [{"resourceClaimName": "old-cpus-x7k2q", "containers": ["c"],
               "mapping": [{"name": "cpu", "quantity": "2"}]}]
    dump = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [NODE, _NA_CLASS, _NA_CLAIM, _na_pod(status)]})
    out, _ = _import(tmp_path, dump, version="1.37")
    assert "nodeAllocatableResourceClaimStatuses" not in yaml.safe_load(out)["pods"][0].get("status", {})
    assert "DRANodeAllocatableResources" not in out.split("\n# ")[0]
    assert "pod status.nodeAllocatableResourceClaimStatuses of 1.37" in out.replace("\n# ", " ")


def test_a_pod_groups_resource_claims_are_kept_with_their_gate(tmp_path):
    """1.36: a PodGroup's spec.resourceClaims (DRAWorkloadResourceClaims, served only with the
    gate on) is kept, a template's entry by the claim the controller made (its
    status.resourceClaimStatuses), and so is the same entry of a pod of the group; the gate is
    turned on."""
    pg = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
          "metadata": {"name": "pg", "namespace": "default"},
          "spec": {"schedulingPolicy": {"gang": {"minCount": 2}},
                   "resourceClaims": [{"name": "fabric", "resourceClaimTemplateName": "fabric"},
                                      {"name": "shared", "resourceClaimName": "shared-net"}]},
          "status": {"resourceClaimStatuses": [{"name": "fabric", "resourceClaimName": "pg-fabric-9zq4d"}]}}
    sg = {"podGroupName": "pg"}
    claims = [{"name": "fabric", "resourceClaimTemplateName": "fabric"}]
    net = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "net"}}
    made = [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": n, "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "nic", "exactly": {"deviceClassName": "net"}}]}}}
            for n in ("pg-fabric-9zq4d", "shared-net")]
    dump = _gang_dump(pg, net, *made, _gang_pod("w-1", schedulingGroup=sg, resourceClaims=claims),
                      _gang_pod("w-2", schedulingGroup=sg, resourceClaims=claims))
    out, _ = _import(tmp_path, dump, version="1.36", pending=True)
    assert "featureGates: {GenericWorkload: true, GangScheduling: true, DRAWorkloadResourceClaims: true}\n" in out
    doc = yaml.safe_load(out)
    assert [o["spec"] for o in doc["objects"] if o["kind"] == "PodGroup"] == [{
        "schedulingPolicy": {"gang": {"minCount": 2}},
        "resourceClaims": [{"name": "fabric", "resourceClaimName": "pg-fabric-9zq4d"},
                           {"name": "shared", "resourceClaimName": "shared-net"}]}]
    assert out.count("resourceClaims: [{name: fabric, resourceClaimName: pg-fabric-9zq4d}]") == 2
    assert "needs the alpha gate DRAWorkloadResourceClaims" not in out.replace("\n# ", " ")


def test_a_pod_to_schedule_is_imported_without_its_node_allocatable_status(tmp_path):
    pod = _na_pod()
    del pod["spec"]["nodeName"]
    pod["status"]["phase"] = "Pending"
    pod["spec"]["schedulerName"] = "default-scheduler"
    dump = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [NODE, _NA_CLASS, _NA_CLAIM, pod]})
    out, _ = _import(tmp_path, dump, version="1.36", pending=True)
    assert "nodeAllocatableResourceClaimStatuses:" not in out
    assert "status.nodeAllocatableResourceClaimStatuses of pod(s) to schedule, left out" in out.replace("\n# ", " ")


# ---- what a claim's status carries: shares, taints' tolerations, binding conditions ------------

_CC_SLICE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-nics"},
             "spec": {"driver": "nic.example.com", "nodeName": "n1", "pool": {"name": "n1"},
                      "devices": [{"name": "nic", "allowMultipleAllocations": True,
                                   "capacity": {"bw": {"value": "10G"}}}]}}
_CC_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "nic"}}


def _cc_claim(name, result_extra, **meta):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default", **meta},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "nic"}}]}},
            "status": {"allocation": {"devices": {"results": [
                {"request": "r", "driver": "nic.example.com", "pool": "n1", "device": "nic", **result_extra}]}},
                "reservedFor": [{"resource": "pods", "name": "old", "uid": "u1"}]}}


def test_a_claims_consumed_capacity_and_share_are_kept(tmp_path):
    """1.36 (DRAConsumableCapacity beta): an allocated share's shareID and consumedCapacity are
    kept, so the 7G it holds of the nic's 10G count: a claim for 4G more does not fit, 3G does.
    (The import used to keep only request, driver, pool, device and adminAccess: the share
    then took nothing and 4G fitted.)"""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    held = _cc_claim("old-nic", {"shareID": "0b1c2d3e-0000-4000-8000-000000000001", "consumedCapacity": {"bw": "7G"}})
    old = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "old", "namespace": "default"},
           "spec": {"nodeName": "n1", "containers": [{"name": "c"}],
                    "resourceClaims": [{"name": "nic", "resourceClaimName": "old-nic"}]},
           "status": {"phase": "Running"}}
    dump = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [node, _CC_CLASS, _CC_SLICE, held, old]})
    out, warnings = _import(tmp_path, dump, version="1.36")
    assert not [w for w in warnings if "left out" in w], warnings
    doc = yaml.safe_load(out)
    (got,) = [o for o in doc["objects"] if o["kind"] == "ResourceClaim"]
    assert got["status"]["allocation"]["devices"]["results"] == [
        {"request": "r", "driver": "nic.example.com", "pool": "n1", "device": "nic",
         "shareID": "0b1c2d3e-0000-4000-8000-000000000001", "consumedCapacity": {"bw": "7G"}}]
    new = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "new"},
           "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "nic",
                                                                        "capacity": {"requests": {"bw": "4G"}}}}]}}}
    doc["objects"].append(new)
    doc["pod"] = {"name": "p", "resourceClaims": [{"name": "r", "resourceClaimName": "new"}]}
    for bw, expect in (("4G", {"unschedulable": True}),
                       ("3G", {"selected": "n1", "allocations": {"new": ["nic.example.com/n1/nic"]}})):
        new["spec"]["devices"]["requests"][0]["exactly"]["capacity"]["requests"]["bw"] = bw
        doc["expect"] = expect
        p = tmp_path / f"case-{bw}.yaml"
        p.write_text(yaml.safe_dump(doc), encoding="utf-8")
        v = check(_load_one(p))
        assert v.passed, (bw, v.message)


def test_a_claim_waiting_for_binding_conditions_is_left_out_by_name(tmp_path):
    """An allocated device with bindingConditions (DRADeviceBindingConditions) is kept in the
    import, so the case's reader refuses the claim by name and the import leaves it out with
    that reason, where dropping the field made the claim look ready."""
    claim = _cc_claim("old-nic", {"bindingConditions": ["dra.example.com/attached"],
                                  "bindingFailureConditions": ["dra.example.com/failed"]})
    dump = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [NODE, _CC_CLASS, _CC_SLICE, claim]})
    out, warnings = _import(tmp_path, dump, version="1.36")
    (w,) = [w for w in warnings if "left out" in w]
    assert w.startswith("objects ResourceClaim old-nic: left out, kspread rejects it: ") and \
        "bindingConditions" in w and "DRADeviceBindingConditions" in w, w
    assert "old-nic" not in out.split("\n# ")[0]


def test_a_pod_group_claims_owner_and_reservation_are_kept(tmp_path):
    """DRAWorkloadResourceClaims (1.36): a claim the controller made from a PodGroup's template
    keeps its PodGroup owner and its reservation for the group (reservedFor's apiGroup), which
    DynamicResources reads (IsForPodGroup; a reservation for the group); and a claim
    DynamicResources made for extended resources keeps its annotation."""
    owner = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "name": "pg", "uid": "u9",
             "controller": True, "blockOwnerDeletion": True}
    claim = _cc_claim("pg-fabric-9zq4d", {}, ownerReferences=[owner],
                      annotations={"resource.kubernetes.io/extended-resource-claim": "true", "other": "x"})
    claim["status"]["reservedFor"] = [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "pg",
                                       "uid": "u9"}]
    got = importer.device_object(claim)
    assert got["metadata"] == {"name": "pg-fabric-9zq4d", "namespace": "default",
                               "ownerReferences": [{k: owner[k] for k in ("apiVersion", "kind", "name", "controller")}],
                               "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"}}
    assert got["status"]["reservedFor"] == [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "pg"}]


# ---- what the importer keeps of each kind: the audit of dev/README.md "What the import keeps" -----


def test_strip_noise_keeps_the_annotations_kspread_reads():
    """kubectl's annotations blocks are cut but for the entries of the annotations kspread
    reads, which stay under their key (a value on continuation lines included)."""
    text = textwrap.dedent("""\
        items:
        - metadata:
            annotations:
              kubectl.kubernetes.io/last-applied-configuration: |
                {"volume.kubernetes.io/selected-node": "no"}
              pv.kubernetes.io/bind-completed: "yes"
              volume.kubernetes.io/selected-node: a-node-name-so-long
                that-it-wraps
              zz: x
            name: c1
          spec: {}
        - metadata:
            annotations:
              other: x
            name: c2
        """)
    assert yaml.safe_load(importer.strip_noise(text)) == {"items": [
        {"metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "yes",
                                      "volume.kubernetes.io/selected-node": "a-node-name-so-long that-it-wraps"},
                      "name": "c1"}, "spec": {}},
        {"metadata": {"name": "c2"}}]}


_SN_NODES = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
              "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}
             for n, cpu in (("n1", "8"), ("n2", "2"))]
_SN_CLASS = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "late"},
             "provisioner": "disk.csi.example.com", "volumeBindingMode": "WaitForFirstConsumer"}


def test_a_yaml_dumps_claim_keeps_the_node_it_is_provisioned_for(tmp_path):
    """A claim being provisioned for n2 (volume.kubernetes.io/selected-node) keeps its
    annotation through a kubectl YAML dump, whose annotations blocks the import cuts: the pod
    using it goes to n2 only. (strip_noise used to cut every annotation before the storage
    objects were trimmed: the claim lost the node, and the pod went to the roomier n1.)"""
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": "data", "namespace": "default",
                          "annotations": {"volume.kubernetes.io/selected-node": "n2",
                                          "volume.kubernetes.io/storage-provisioner": "disk.csi.example.com"}},
             "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "late",
                      "resources": {"requests": {"storage": "1Gi"}}},
             "status": {"phase": "Pending"}}
    pod = _pending_pod("p", "2024-05-02T10:00:00Z", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}])
    dump = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [*_SN_NODES, _SN_CLASS, claim, pod]})
    out, _ = _import(tmp_path, dump, version="1.30", pod="default/p")
    (got,) = [o for o in yaml.safe_load(out)["objects"] if o["kind"] == "PersistentVolumeClaim"]
    assert got["metadata"]["annotations"] == {"volume.kubernetes.io/selected-node": "n2"}
    p = tmp_path / "case.yaml"
    p.write_text(out.replace("expect: {}", "expect: {selected: n2}"), encoding="utf-8")
    v = check(_load_one(p))
    assert v.passed, v.message

def test_a_csi_drivers_opt_in_to_the_node_check_is_kept(tmp_path):
    """1.36 with VolumeLimitScaling: a CSIDriver's spec.preventPodSchedulingIfMissing is kept,
    so NodeVolumeLimits rejects n1, whose CSINode lacks the driver. (The import used to keep
    storageCapacity only, and the schema refused the field: the pod was placed on n1.) A JSON
    dump: its annotations were never cut."""
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
          "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}, "storageClassName": "",
                   "claimRef": {"namespace": "default", "name": "data"},
                   "csi": {"driver": "a.csi.io", "volumeHandle": "h1"}},
          "status": {"phase": "Bound"}}
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": "data", "namespace": "default",
                          "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
             "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "", "volumeName": "pv1",
                      "resources": {"requests": {"storage": "1Gi"}}},
             "status": {"phase": "Bound"}}
    driver = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "a.csi.io"},
              "spec": {"attachRequired": True, "preventPodSchedulingIfMissing": True}}
    csinode = {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n1"},
               "spec": {"drivers": [{"name": "b.csi.io", "nodeID": "n1", "topologyKeys": None}]}}
    pod = _pending_pod("p", "2024-05-02T10:00:00Z", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}])
    dump = json.dumps({"apiVersion": "v1", "kind": "List", "items": [_SN_NODES[0], pv, claim, driver, csinode, pod]})
    out, _ = _import(tmp_path, dump, "dump.json", version="1.36", pod="default/p")
    (got,) = [o for o in yaml.safe_load(out)["objects"] if o["kind"] == "CSIDriver"]
    assert got["spec"] == {"preventPodSchedulingIfMissing": True}
    p = tmp_path / "case.yaml"
    p.write_text(out.replace("version: '1.36'\n", "version: '1.36'\nfeatureGates: {VolumeLimitScaling: true}\n")
                 .replace("version: \"1.36\"\n", "version: \"1.36\"\nfeatureGates: {VolumeLimitScaling: true}\n")
                 .replace("expect: {}", "expect: {unschedulable: true}"), encoding="utf-8")
    assert "VolumeLimitScaling" in p.read_text(encoding="utf-8")
    v = check(_load_one(p))
    assert v.passed, v.message

def test_a_volumes_reclaim_policy_is_kept():
    """A PV's persistentVolumeReclaimPolicy is kept: a case refuses by name to delete the
    claim of a Recycle volume (its recycler is not modelled), where the import made it Retain."""
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
          "spec": {"capacity": {"storage": "1Gi"}, "persistentVolumeReclaimPolicy": "Recycle",
                   "hostPath": {"path": "/x"}}}
    assert importer.storage_object(pv)["spec"] == {"persistentVolumeReclaimPolicy": "Recycle",
                                                   "capacity": {"storage": "1Gi"}}

def test_an_image_volume_is_kept_for_image_locality(tmp_path):
    """1.36: ImageLocality counts a pod's image volumes: the import keeps them (their
    reference), so n2, which has the volume's 900MB image, scores over n1. (The import used
    to drop image volumes: both nodes scored alike.)"""
    nodes = [dict(n, status={**n["status"], "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}})
             for n in _SN_NODES]
    nodes[1]["status"]["images"] = [{"names": ["example.com/model:v1"], "sizeBytes": 900_000_000}]
    pod = _pending_pod("p", "2024-05-02T10:00:00Z",
                       volumes=[{"name": "m", "image": {"reference": "example.com/model:v1", "pullPolicy": "IfNotPresent"}}])
    dump = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [*nodes, pod]})
    out, _ = _import(tmp_path, dump, version="1.36", pod="default/p")
    assert yaml.safe_load(out)["pod"]["volumes"] == [{"name": "m", "image": {"reference": "example.com/model:v1"}}]
    p = tmp_path / "case.yaml"
    p.write_text(out.replace("expect: {}", "expect: {selected: n2}"), encoding="utf-8")
    v = check(_load_one(p))
    assert v.passed, v.message

def test_a_containers_claims_are_kept(tmp_path):
    """1.36 DRANodeAllocatableResources: a container's resources.claims (which of the pod's
    claims it uses) is kept, so the pod's node-allocatable claim is referenced and the pod
    fits n1. (The import used to keep a container's requests only: DynamicResources found the
    claim "not referenced by any container within the pod", and the pod was unschedulable.)"""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    tmpl = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "cpus", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "cpu", "exactly": {"deviceClassName": "cpus"}}]}}}}
    pod = _pending_pod("p", "2024-05-02T10:00:00Z",
                       containers=[{"name": "c", "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "cpus"}]}}],
                       resourceClaims=[{"name": "cpus", "resourceClaimTemplateName": "cpus"}])
    dump = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [node, _NA_CLASS, _NA_SLICE, tmpl, pod]})
    out, _ = _import(tmp_path, dump, version="1.36", pod="default/p")
    assert yaml.safe_load(out)["pod"]["containers"] == [
        {"name": "c", "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "cpus"}]}}]
    p = tmp_path / "case.yaml"
    p.write_text(out.replace("expect: {}", "expect: {selected: n1}"), encoding="utf-8")
    v = check(_load_one(p))
    assert v.passed, v.message

@pytest.mark.parametrize("minor", [35, 36])
def test_node_declared_features_a_pod_needs_from_1_36_are_kept(tmp_path, minor):
    """A volume mount's bindMountOptions and spec.hostNetwork with hostUsers: false make a pod
    need a node-declared feature from 1.36, which kspread refuses by name: the import keeps
    them (the latter in a raw pod), so a 1.36 case leaves the pods out with that reason where
    it used to take them as needing nothing; 1.35 reads neither, and keeps the pods."""
    mounts = _pending_pod("mounts", "2024-05-02T10:00:00Z", nodeName="n1", containers=[
        {"name": "c", "volumeMounts": [{"name": "v", "mountPath": "/v", "bindMountOptions": {"x": "y"}},
                                       {"name": "w", "mountPath": "/w"}]}])
    host = _pending_pod("host", "2024-05-02T10:00:00Z", nodeName="n1", hostNetwork=True, hostUsers=False)
    dump = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [NODE, mounts, host]})
    out, warnings = _import(tmp_path, dump, version=f"1.{minor}")
    left = sorted(w for w in warnings if "left out" in w)
    if minor == 35:
        assert left == [] and [p["name"] for p in yaml.safe_load(out)["pods"]] == ["mounts", "host"]
        return
    assert len(left) == 2, warnings
    assert left[0].startswith("objects Pod host: left out, kspread rejects it: ") and \
        "UserNamespacesHostNetworkSupport" in left[0], left[0]
    assert left[1].startswith("pods mounts: left out, kspread rejects it: ") and \
        "VolumeBindMountOptions" in left[1], left[1]

def test_a_pod_to_schedule_needing_a_host_network_user_namespace_is_left_out(tmp_path):
    pod = _pending_pod("p", "2024-05-02T10:00:00Z", hostNetwork=True, hostUsers=False)
    dump = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [NODE, pod]})
    warnings: list[str] = []
    p = tmp_path / "dump.yaml"
    p.write_text(dump, encoding="utf-8")
    with pytest.raises(importer.ImportFailed, match="pod default/p could not be imported"):
        importer.import_snapshot(str(p), version="1.36", pod="default/p", warn=warnings.append)
    assert any("UserNamespacesHostNetworkSupport" in w for w in warnings), warnings

def test_a_nodes_zero_amount_of_an_extended_resource_is_kept(tmp_path):
    """A node's zero amount of an extended resource is kept (other zero amounts are left out):
    from 1.35 DynamicResources (DRAExtendedResource, on by default in 1.36) leaves a resource
    the node lists to NodeResourcesFit, even at 0, and rejects the node for one it does not
    list. With only DynamicResources filtering, the pod fits n1, whose gpu a device serves;
    the import used to drop example.com/fpga: "0", and the pod fitted nowhere ("cannot fit
    resource")."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110", "example.com/fpga": "0",
                                       "hugepages-2Mi": "0"}}}
    cls = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"extendedResourceName": "example.com/gpu"}}
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
              "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1"}, "devices": [{"name": "g0"}]}}
    pod = _pending_pod("p", "2024-05-02T10:00:00Z", containers=[
        {"name": "c", "resources": {"requests": {"example.com/gpu": "1", "example.com/fpga": "1"}}}])
    dump = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [node, cls, slice_, pod]})
    out, _ = _import(tmp_path, dump, version="1.36", pod="default/p")
    doc = yaml.safe_load(out)
    assert doc["nodes"][0]["allocatable"] == {"cpu": "4", "memory": "8Gi", "pods": "110", "example.com/fpga": "0"}
    doc["profile"] = {"filter": ["DynamicResources"], "score": []}
    doc["expect"] = {"selected": "n1"}
    p = tmp_path / "case.yaml"
    p.write_text(yaml.safe_dump(doc), encoding="utf-8")
    v = check(_load_one(p))
    assert v.passed, v.message

def test_a_device_taint_rule_is_kept_with_its_gates(tmp_path):
    """1.35: a DeviceTaintRule (which the import used to skip as a kind kspread does not
    read) is kept, with the gates the API server serves it with: its NoSchedule taint on the
    only nic leaves a pod whose claim does not tolerate it unschedulable."""
    rule = {"apiVersion": "resource.k8s.io/v1alpha3", "kind": "DeviceTaintRule",
            "metadata": {"name": "nic-down", "uid": "u7"},
            "spec": {"deviceSelector": {"driver": "nic.example.com", "pool": "n1", "device": "nic"},
                     "taint": {"key": "down", "effect": "NoSchedule", "timeAdded": "2024-05-02T09:00:00Z"}},
            "status": {"conditions": []}}
    slice_ = json.loads(json.dumps(_CC_SLICE))
    del slice_["spec"]["devices"][0]["allowMultipleAllocations"], slice_["spec"]["devices"][0]["capacity"]
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "nic", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "nic"}}]}}}
    pod = _pending_pod("p", "2024-05-02T10:00:00Z", resourceClaims=[{"name": "r", "resourceClaimName": "nic"}])
    dump = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [node, _CC_CLASS, slice_, rule, claim, pod]})
    out, warnings = _import(tmp_path, dump, version="1.35", pod="default/p")
    assert importer.TAINT_RULE_NOTE in warnings
    assert "featureGates: {DRADeviceTaints: true, DRADeviceTaintRules: true}\n" in out
    (got,) = [o for o in yaml.safe_load(out)["objects"] if o["kind"] == "DeviceTaintRule"]
    assert got == {k: rule[k] for k in ("apiVersion", "kind", "spec")} | {"metadata": {"name": "nic-down"}}
    p = tmp_path / "case.yaml"
    p.write_text(out.replace("expect: {}", "expect: {unschedulable: true}"), encoding="utf-8")
    v = check(_load_one(p))
    assert v.passed, v.message
