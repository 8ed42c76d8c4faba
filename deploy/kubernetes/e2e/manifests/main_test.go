package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var testOptions = Options{Image: "127.0.0.1:1/cmpbench:e2e", Busybox: "127.0.0.1:1/busybox:e2e", Shards: 2,
	Target: "127.0.0.1:2", Volume: "/var/lib/x", ShardCPU: "700m", ShardMemory: "512Mi"}

func load(t *testing.T) map[string][]runtime.Object {
	t.Helper()
	docs := map[string][]runtime.Object{}
	for _, f := range files {
		objs, err := decodeFile(filepath.Join("..", "..", f))
		if err != nil {
			t.Fatal(err)
		}
		docs[f] = objs
	}
	return docs
}

// The production manifests take every substitution, and come out changed in
// those places only.
func TestSubstitute(t *testing.T) {
	docs := load(t)
	if err := Substitute(docs, testOptions); err != nil {
		t.Fatal(err)
	}
	shards, _ := one[*batchv1.Job](docs["shards.yaml"])
	c := cmpbench(&shards.Spec.Template.Spec)
	if *shards.Spec.Completions != 2 || *shards.Spec.Parallelism != 2 || !slices.Contains(c.Args, "$(JOB_COMPLETION_INDEX)/2") {
		t.Errorf("shard count: %d %d %q", *shards.Spec.Completions, *shards.Spec.Parallelism, c.Args)
	}
	if shards.Spec.Template.Spec.Affinity != nil || !shards.Spec.Template.Spec.HostNetwork || c.Image != testOptions.Image {
		t.Errorf("shards: affinity %v, host network %v, image %s", shards.Spec.Template.Spec.Affinity, shards.Spec.Template.Spec.HostNetwork, c.Image)
	}
	if c.Resources.Requests.Cpu().String() != "700m" || c.Resources.Limits.Memory().String() != "512Mi" {
		t.Errorf("shard resources: %v", c.Resources)
	}
	if *shards.Spec.BackoffLimit != 0 || shards.Spec.Template.Spec.SecurityContext.RunAsUser == nil {
		t.Error("a substitution changed what it should not: backoffLimit, the security context")
	}
	cm, _ := one[*corev1.ConfigMap](docs["config.yaml"])
	if !strings.Contains(cm.Data["cmpbench.yaml"], "endpoint: 127.0.0.1:2") || !strings.Contains(cm.Data["suite.yaml"], "e2e-scale-out") {
		t.Errorf("config: %v", cm.Data)
	}
	pv, err := one[*corev1.PersistentVolume](docs["volume.yaml"])
	if err != nil || pv.Spec.HostPath.Path != "/var/lib/x" || !slices.Contains(pv.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("volume: %+v %v", pv, err)
	}
	results, _ := one[*corev1.Pod](docs["results.yaml"])
	if results.Spec.Containers[0].Image != testOptions.Busybox {
		t.Errorf("results image %s", results.Spec.Containers[0].Image)
	}
}

// A production manifest that no longer has what a substitution changes fails
// the substitution, rather than being run as it is.
func TestSubstituteFindsNothing(t *testing.T) {
	docs := load(t)
	shards, _ := one[*batchv1.Job](docs["shards.yaml"])
	shards.Spec.Template.Spec.Affinity = nil
	err := Substitute(docs, testOptions)
	if err == nil || !strings.Contains(err.Error(), "anti-affinity") {
		t.Errorf("no anti-affinity to drop: %v", err)
	}
	if err := checkLoopback("10.0.0.5:6379"); err == nil {
		t.Error("a target off loopback was accepted")
	}
}
