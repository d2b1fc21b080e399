//go:build !legacy || v131

// Device objects (dynamic resource allocation) of a case: decoded in whatever
// resource.k8s.io version the input gives (the build's scheduler reads one: dra_*.go puts
// them in its informers), and the claims the resource claim controller would make for the
// pods' template entries.
package main

import (
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
)

// templateClaimName: the name of the claim made for a pod's template entry. Upstream's
// controller generates "<pod>-<entry>-<5 random characters>" and records it in the pod's
// status.resourceClaimStatuses; the oracle (like kspread's case format) leaves out the
// random part.
func templateClaimName(pod, entry string) string { return pod + "-" + entry }

// setPodClaims: spec.resourceClaims, and status.resourceClaimStatuses of the pod's
// template entries, as the controller writes them once it has made the claims.
func setPodClaims(pod *v1.Pod, raw json.RawMessage) {
	must(json.Unmarshal(raw, &pod.Spec.ResourceClaims))
	for _, rc := range pod.Spec.ResourceClaims {
		// the pod's container uses each claim (DRANodeAllocatableResources reads it)
		for i := range pod.Spec.Containers {
			pod.Spec.Containers[i].Resources.Claims = append(pod.Spec.Containers[i].Resources.Claims,
				v1.ResourceClaim{Name: rc.Name})
		}
		if rc.ResourceClaimTemplateName == nil {
			continue
		}
		name := templateClaimName(pod.Name, rc.Name)
		pod.Status.ResourceClaimStatuses = append(pod.Status.ResourceClaimStatuses,
			v1.PodResourceClaimStatus{Name: rc.Name, ResourceClaimName: &name})
	}
}

// draSupported: false in builds without a dra_*.go that runs DynamicResources (dra_none.go,
// the legacy family).
var draSupported = true

type manifest map[string]interface{}

func (m manifest) meta() map[string]interface{} {
	md, _ := m["metadata"].(map[string]interface{})
	if md == nil {
		md = map[string]interface{}{}
		m["metadata"] = md
	}
	return md
}

// buildDevices decodes in.Devices into c.DRA (and c.Objects, for the fake client), with a
// claim for each template entry of a pod that has none of that name: the template's
// spec.spec, its spec.metadata labels and annotations, owned by the pod (controller
// reference with the pod's UID, as PreFilter checks). Claims get the UID "<ns>/<name>",
// which a claim's status.reservedFor refers to as a pod's ("<ns>/<pod>").
func buildDevices(in *Input, c *Cluster) error {
	if len(in.Devices) > 0 && !draSupported {
		return fmt.Errorf("devices: this oracle build does not run DynamicResources (%s)", k8sVersion)
	}
	var items []manifest
	claims := map[string]bool{}
	templates := map[string]manifest{}
	for i, raw := range in.Devices {
		var m manifest
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("devices[%d]: %v", i, err)
		}
		md := m.meta()
		ns, _ := md["namespace"].(string)
		name, _ := md["name"].(string)
		switch m["kind"] {
		case "ResourceClaimTemplate":
			templates[nsOr(ns)+"/"+name] = m
			continue
		case "ResourceClaim":
			md["namespace"] = nsOr(ns)
			claims[nsOr(ns)+"/"+name] = true
		}
		items = append(items, m)
	}
	for _, pod := range append(append([]*v1.Pod{}, c.Pods...), c.Pod) {
		for _, rc := range pod.Spec.ResourceClaims {
			if rc.ResourceClaimTemplateName == nil {
				continue
			}
			name := templateClaimName(pod.Name, rc.Name)
			if claims[pod.Namespace+"/"+name] {
				continue
			}
			t, ok := templates[pod.Namespace+"/"+*rc.ResourceClaimTemplateName]
			if !ok {
				return fmt.Errorf("pod %s: ResourceClaimTemplate %q not in devices", pod.Name, *rc.ResourceClaimTemplateName)
			}
			spec, _ := t["spec"].(map[string]interface{})
			tmeta, _ := spec["metadata"].(map[string]interface{})
			md := map[string]interface{}{"name": name, "namespace": pod.Namespace,
				"ownerReferences": []interface{}{map[string]interface{}{"apiVersion": "v1", "kind": "Pod",
					"name": pod.Name, "uid": string(pod.UID), "controller": true, "blockOwnerDeletion": true}}}
			for _, k := range []string{"labels", "annotations"} {
				if v, ok := tmeta[k]; ok {
					md[k] = v
				}
			}
			claims[pod.Namespace+"/"+name] = true
			items = append(items, manifest{"apiVersion": t["apiVersion"], "kind": "ResourceClaim", "metadata": md,
				"spec": spec["spec"]})
		}
	}
	for i, m := range items {
		raw, err := json.Marshal(m)
		if err != nil {
			return err
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
		if err != nil {
			return fmt.Errorf("devices (%v %v): %v", m["kind"], m.meta()["name"], err)
		}
		if m["kind"] == "ResourceClaim" {
			acc, err := meta.Accessor(obj)
			if err != nil {
				return fmt.Errorf("devices[%d]: %v", i, err)
			}
			acc.SetUID(types.UID(acc.GetNamespace() + "/" + acc.GetName()))
		}
		c.DRA = append(c.DRA, obj)
		c.Objects = append(c.Objects, obj)
	}
	return nil
}
