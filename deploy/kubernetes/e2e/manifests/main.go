// Command manifests writes deploy/kubernetes's manifests as the one-node e2e cluster
// applies them (deploy/kubernetes/e2e): the project's own files, decoded strictly
// with Kubernetes' types, with the substitutions README.md lists and nothing else.
//
//	manifests -in deploy/kubernetes -out DIR -image REF -busybox REF -shards 2 \
//	  -target 127.0.0.1:PORT -volume /path/on/the/node
//
// It writes config.yaml, volume.yaml, shards.yaml, merge.yaml and results.yaml to
// DIR, the files the README's steps apply, and fails when a substitution finds
// nothing to substitute: a changed production manifest must not be run unchanged
// by accident, nor a substitution be silently dropped.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	kyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Options are the values the substitutions put in.
type Options struct {
	Image   string // the cmpbench image, for registry.example.com/cmpbench:latest
	Busybox string // the image with tar and sleep, for the results pod's busybox
	Shards  int    // N, for the 3 of completions, parallelism and --shard i/3
	Target  string // host:port of the redis-server on the node's loopback
	Volume  string // the node's directory the hostPath PersistentVolume holds
	// The shard pods' CPU and memory (requests = limits, as in production).
	ShardCPU, ShardMemory string
}

// The files the README applies, in its order.
var files = []string{"config.yaml", "volume.yaml", "shards.yaml", "merge.yaml", "results.yaml"}

// The e2e's system: the node's redis-server on loopback, with the ACL user whose
// password the Secret cmpbench-secrets holds, as the production systems file's
// valkey. disposable: shard 0 may empty it before the load.
const (
	systemName = "node-redis"
	systemsFmt = `systems:
  node-redis:
    description: redis-server on the e2e node's loopback (deploy/kubernetes/e2e)
    adapter: resp
    endpoint: %s
    disposable: true
    auth: {username: cmpbench-load, password: "${VALKEY_PASSWORD}"}
`
	// The e2e's suite: a short run of each kind the shards must agree on (a load
	// split by key range and validated by shard 0, a fixed rate split between the
	// shards, an op count split exactly), at rates that load nothing: the machine is
	// shared and this checks the path, not the systems.
	suite = `name: e2e-scale-out
description: >-
  deploy/kubernetes/e2e: load 20,000 keys of 256 B and check the server holds them,
  then 30 s at a fixed 800 ops/s and 3,001 operations counted out between the shards.
defaults:
  connections: 4
  memtier: {key_max: 20000, key_prefix: e2e_, value_size: 256}
phases:
  - {name: load, kind: load, duration: 2m, validate: true, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: rate-800, rate: 800, duration: 30s, memtier: {ratio: "1:10", key_pattern: "R:R"}}
  - {name: counted, ops: 3001, rate: 1000, duration: 30s, memtier: {ratio: "1:1", key_pattern: "S:S"}}
`
)

func main() {
	var o Options
	in := flag.String("in", "deploy/kubernetes", "the production manifests")
	out := flag.String("out", "", "where to write the e2e's manifests")
	flag.StringVar(&o.Image, "image", "", "the cmpbench image")
	flag.StringVar(&o.Busybox, "busybox", "", "the image for the results pod (tar, sleep)")
	flag.IntVar(&o.Shards, "shards", 2, "the number of shards")
	flag.StringVar(&o.Target, "target", "", "host:port of the node's redis-server (loopback only)")
	flag.StringVar(&o.Volume, "volume", "", "the node's directory behind the hostPath PersistentVolume")
	flag.StringVar(&o.ShardCPU, "shard-cpu", "700m", "each shard's CPU, requests = limits")
	flag.StringVar(&o.ShardMemory, "shard-memory", "512Mi", "each shard's memory, requests = limits")
	flag.Parse()
	if err := run(*in, *out, o); err != nil {
		fmt.Fprintln(os.Stderr, "manifests:", err)
		os.Exit(1)
	}
}

func run(in, out string, o Options) error {
	if out == "" || o.Image == "" || o.Busybox == "" || o.Target == "" || o.Volume == "" {
		return errors.New("-out, -image, -busybox, -target and -volume are required")
	}
	if err := checkLoopback(o.Target); err != nil {
		return err
	}
	docs := map[string][]runtime.Object{}
	for _, f := range files {
		objs, err := decodeFile(filepath.Join(in, f))
		if err != nil {
			return err
		}
		docs[f] = objs
	}
	if err := Substitute(docs, o); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		var b bytes.Buffer
		if err := encode(&b, docs[f]); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if err := os.WriteFile(filepath.Join(out, f), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// checkLoopback refuses a target that is not on the node's loopback: the e2e sends
// load nowhere else.
func checkLoopback(target string) error {
	host, _, ok := strings.Cut(target, ":")
	if !ok || !(strings.HasPrefix(host, "127.") || host == "localhost") {
		return fmt.Errorf("-target %q: the e2e's target is on loopback (127.0.0.0/8), host:port", target)
	}
	return nil
}

// Substitute makes the production objects the e2e's, in place; each step fails
// when it finds nothing to change.
func Substitute(docs map[string][]runtime.Object, o Options) error {
	var errs []error
	step := func(name string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	shards, err := one[*batchv1.Job](docs["shards.yaml"])
	if err != nil {
		return fmt.Errorf("shards.yaml: %w", err)
	}
	step("images", images(docs, o))
	step("shard count", shardCount(shards, o.Shards))
	step("anti-affinity", dropAntiAffinity(shards))
	step("shard resources", shardResources(shards, o.ShardCPU, o.ShardMemory))
	step("host network", hostNetwork(docs))
	step("systems and suite", systemsAndSuite(docs, shards, o.Target))
	step("storage", storage(docs, o.Volume))
	return errors.Join(errs...)
}

// pods are the pod specs of every Job and Pod.
func pods(docs map[string][]runtime.Object) []*corev1.PodSpec {
	var ps []*corev1.PodSpec
	for _, f := range files {
		for _, obj := range docs[f] {
			switch o := obj.(type) {
			case *batchv1.Job:
				ps = append(ps, &o.Spec.Template.Spec)
			case *corev1.Pod:
				ps = append(ps, &o.Spec)
			}
		}
	}
	return ps
}

// images: the cmpbench image built and served on the node's loopback, and for
// busybox (results.yaml) an image of Debian's busybox-static.
func images(docs map[string][]runtime.Object, o Options) error {
	n := 0
	for _, p := range pods(docs) {
		for i := range p.Containers {
			c := &p.Containers[i]
			switch {
			case c.Image == "registry.example.com/cmpbench:latest":
				c.Image = o.Image
			case strings.HasPrefix(c.Image, "busybox:"):
				c.Image = o.Busybox
			default:
				return fmt.Errorf("container %s runs %s, which the e2e has no image for", c.Name, c.Image)
			}
			n++
		}
	}
	if n == 0 {
		return errors.New("no container")
	}
	return nil
}

// shardCount: N shards, in completions, parallelism and --shard together.
func shardCount(j *batchv1.Job, n int) error {
	c := cmpbench(&j.Spec.Template.Spec)
	i := slices.Index(c.Args, "--shard")
	if c == nil || i < 0 || i+1 >= len(c.Args) {
		return errors.New("no --shard in the shard Job's args")
	}
	index, _, ok := strings.Cut(c.Args[i+1], "/")
	if !ok || j.Spec.Completions == nil || j.Spec.Parallelism == nil {
		return fmt.Errorf("--shard %q, completions and parallelism: not the form substituted", c.Args[i+1])
	}
	c.Args[i+1] = index + "/" + strconv.Itoa(n)
	*j.Spec.Completions, *j.Spec.Parallelism = int32(n), int32(n)
	return nil
}

// dropAntiAffinity: one node cannot hold one shard per node.
func dropAntiAffinity(j *batchv1.Job) error {
	a := j.Spec.Template.Spec.Affinity
	if a == nil || a.PodAntiAffinity == nil || len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) == 0 {
		return errors.New("the shard Job has no required pod anti-affinity")
	}
	a.PodAntiAffinity = nil
	if a.NodeAffinity == nil && a.PodAffinity == nil {
		j.Spec.Template.Spec.Affinity = nil
	}
	return nil
}

// shardResources: the node's 2 cores hold neither 4 CPUs per shard nor 2 shards
// of them; requests stay equal to limits (Guaranteed QoS).
func shardResources(j *batchv1.Job, cpu, memory string) error {
	c := cmpbench(&j.Spec.Template.Spec)
	if c == nil || c.Resources.Limits.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		return errors.New("the shard container has no CPU and memory requests and limits")
	}
	q := corev1.ResourceList{}
	var err error
	if q[corev1.ResourceCPU], err = resource.ParseQuantity(cpu); err != nil {
		return err
	}
	if q[corev1.ResourceMemory], err = resource.ParseQuantity(memory); err != nil {
		return err
	}
	c.Resources.Requests, c.Resources.Limits = q.DeepCopy(), q.DeepCopy()
	return nil
}

// hostNetwork: the shards reach the target on the node's loopback, and no pod
// gets a network of its own (no interface, namespace or iptables rule to leave).
func hostNetwork(docs map[string][]runtime.Object) error {
	for _, p := range pods(docs) {
		if p.HostNetwork {
			return errors.New("a pod is on the host network already")
		}
		p.HostNetwork = true
	}
	return nil
}

// systemsAndSuite: the ConfigMap's systems file and suite are the e2e's, and the
// shards run its system.
func systemsAndSuite(docs map[string][]runtime.Object, j *batchv1.Job, target string) error {
	cm, err := one[*corev1.ConfigMap](docs["config.yaml"])
	if err != nil {
		return err
	}
	if _, ok := cm.Data["cmpbench.yaml"]; !ok {
		return errors.New("ConfigMap has no cmpbench.yaml")
	}
	if _, ok := cm.Data["suite.yaml"]; !ok {
		return errors.New("ConfigMap has no suite.yaml")
	}
	cm.Data["cmpbench.yaml"] = fmt.Sprintf(systemsFmt, target)
	cm.Data["suite.yaml"] = suite
	c := cmpbench(&j.Spec.Template.Spec)
	i := slices.Index(c.Args, "--systems")
	if i < 0 || i+1 >= len(c.Args) {
		return errors.New("no --systems in the shard Job's args")
	}
	c.Args[i+1] = systemName
	return nil
}

// storage: the claim is the production one; the one node has no storage class, so
// a hostPath PersistentVolume of the node's directory, bound to it, stands in for
// the ReadWriteMany volume a cluster of several nodes needs.
func storage(docs map[string][]runtime.Object, dir string) error {
	pvc, err := one[*corev1.PersistentVolumeClaim](docs["volume.yaml"])
	if err != nil {
		return err
	}
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("-volume %q is not an absolute path", dir)
	}
	dirType := corev1.HostPathDirectory
	pv := &corev1.PersistentVolume{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"},
		ObjectMeta: metav1.ObjectMeta{Name: pvc.Name + "-e2e", Labels: pvc.Labels},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: pvc.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes:                   slices.Clone(pvc.Spec.AccessModes),
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              ptrOr(pvc.Spec.StorageClassName, ""),
			ClaimRef:                      &corev1.ObjectReference{Name: pvc.Name, Namespace: "default"},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: &dirType}},
		},
	}
	docs["volume.yaml"] = append(docs["volume.yaml"], pv)
	return nil
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// cmpbench is the container that runs cmpbench.
func cmpbench(p *corev1.PodSpec) *corev1.Container {
	for i := range p.Containers {
		if c := &p.Containers[i]; len(c.Command) > 0 && filepath.Base(c.Command[0]) == "cmpbench" {
			return c
		}
	}
	return nil
}

// one is the only object of type T among objs.
func one[T runtime.Object](objs []runtime.Object) (T, error) {
	var found []T
	for _, o := range objs {
		if t, ok := o.(T); ok {
			found = append(found, t)
		}
	}
	if len(found) != 1 {
		var zero T
		return zero, fmt.Errorf("%d objects of type %T, want 1", len(found), zero)
	}
	return found[0], nil
}

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, batchv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

var serializer = kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme, kjson.SerializerOptions{Yaml: true, Strict: true})

var docSeparator = regexp.MustCompile(`(?m)^---\s*$`)

// decodeFile decodes every document of a manifest strictly, as cmd/cmpbench's
// tests do.
func decodeFile(file string) ([]runtime.Object, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var objs []runtime.Object
	for i, doc := range docSeparator.Split(string(data), -1) {
		js, err := kyaml.ToJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("%s (document %d): %w", file, i+1, err)
		}
		if s := string(bytes.TrimSpace(js)); s == "null" || s == "" {
			continue
		}
		obj, _, err := serializer.Decode([]byte(doc), nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s (document %d): %w", file, i+1, err)
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

func encode(w io.Writer, objs []runtime.Object) error {
	for i, obj := range objs {
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if err := serializer.Encode(obj, w); err != nil {
			return err
		}
	}
	return nil
}
