package kspreadbackend

// A `replicas: max` entry of a sequence (kspread's "how many more of these fit?": CASE-FORMAT.md,
// "Sequences: pods and events"; kspread/engine/steps.py World._max_entry), protocol "max": a step of
// kind "max" whose `template` is the entry's pod. When the scheduler is idle at its place in the
// sequence, replica <name>-0 is created; each time the scheduler is idle again (the taint manager
// having acted on what it bound), the replica is placed when it is bound (spec.nodeName set: a pod
// waiting at Permit is not), and then the next replica is created; the first that is not placed
// stays pending and ends the entry, whose capacity is the number placed. Then the incoming pods
// after the entry are created, as after a step. Each replica is the template with its name, its
// own uid, created at the sequence clock's second, pending, with preemptionPolicy Never (kspread's
// rule: the question never evicts). The replicas are created at the clock as it is: an entry is not
// a step (no disruption recount, the clock not moved to the half second).

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// maxReplicas: kspread's bound (steps.MAX_REPLICAS): more placed than this is the case's error
const maxReplicas = 10_000

// maxEntries: the sequence's `replicas: max` entries: the one in progress, and the capacity of
// each ended (the template's key -> the replicas placed)
type maxEntries struct {
	step     int // the entry in progress (an index of steps), -1 when none
	placed   int
	current  string // the key of the replica created last
	created  int    // every replica created in the run
	capacity map[string]int
}

// maxStart: the entry of step i begins with its first replica
func (t *timeline) maxStart(ctx context.Context, i int) (bool, error) {
	if t.steps[i].Template == nil {
		return false, fmt.Errorf("steps[%d] (max): no template given", i)
	}
	if t.mx.capacity == nil {
		t.mx.capacity = map[string]int{}
	}
	t.mx.step, t.mx.placed = i, 0
	return true, t.maxReplica(ctx)
}

// maxRunning: an entry is in progress (its last replica created, the scheduler now idle)
func (t *timeline) maxRunning() bool { return t.mx.capacity != nil && t.mx.step >= 0 }

// maxNext, the scheduler idle after the entry's last replica: the next replica when that one was
// placed; else the entry ends, and the incoming pods after it are created
func (t *timeline) maxNext(ctx context.Context) (bool, error) {
	i := t.mx.step
	if p := t.getPod(ctx, t.mx.current); p != nil && p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
		t.mx.placed++
		if t.mx.placed >= maxReplicas {
			return false, fmt.Errorf("steps[%d] (max): %d replicas of %s placed and more would fit: kspread stops "+
				"there", i, maxReplicas, t.steps[i].Template.Name)
		}
		return true, t.maxReplica(ctx)
	}
	tmpl := t.steps[i].Template
	t.mx.capacity[podKey(tmpl.Namespace, tmpl.Name)] = t.mx.placed
	t.mx.step = -1
	return true, t.createAfter(i)
}

// maxReplica: the entry's next replica, created pending
func (t *timeline) maxReplica(ctx context.Context) error {
	tmpl := t.steps[t.mx.step].Template
	ns := nsOf(tmpl.Namespace)
	name := fmt.Sprintf("%s-%d", tmpl.Name, t.mx.placed)
	pod := tmpl.DeepCopy()
	never := v1.PreemptNever
	pod.ObjectMeta = metav1.ObjectMeta{Name: name, Namespace: ns, Labels: tmpl.Labels,
		Annotations: tmpl.Annotations, OwnerReferences: tmpl.OwnerReferences,
		UID:               types.UID(fmt.Sprintf("%s/%s#max", ns, name)),
		CreationTimestamp: metav1.NewTime(t.epoch.Add(time.Duration(t.now) * time.Second))}
	pod.Spec.NodeName = ""
	pod.Spec.PreemptionPolicy = &never
	pod.Status = v1.PodStatus{Phase: v1.PodPending}
	defaultPodVolumes(pod)
	if dra != nil {
		if err := dra.podCreating(t.tracker, pod); err != nil {
			return err
		}
	}
	if _, err := t.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("steps[%d] (max): replica %s: %w", t.mx.step, name, err)
	}
	t.mx.current = podKey(ns, name)
	t.mx.created++
	t.note(t.mx.current)
	return nil
}

// maxTries: the scheduling cycles the run allows for the replicas created (ten tries each)
func (t *timeline) maxTries() int {
	if t == nil {
		return 0
	}
	return 10 * t.mx.created
}

// maxCapacity: each entry's capacity (nil without entries)
func (t *timeline) maxCapacity() map[string]int {
	if t == nil {
		return nil
	}
	return t.mx.capacity
}
