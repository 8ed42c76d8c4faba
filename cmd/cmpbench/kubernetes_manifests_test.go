package main

// Reading the Kubernetes manifests under deploy/kubernetes as the API server and
// the kubelet would: strict decoding, env resolution, $(VAR) expansion, volumes.
// The checks are in kubernetes_test.go.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	kyaml "k8s.io/apimachinery/pkg/util/yaml"
)

const (
	kubeDir = "../../deploy/kubernetes"
	// kubeSampleStartAt stands for the start-at ConfigMap's value where only its
	// form matters.
	kubeSampleStartAt = "2026-12-03T10:00:00Z"
	kubeHostname      = "kubernetes.io/hostname"
)

// kubeManifests is every object under deploy/kubernetes, and its README.
type kubeManifests struct {
	jobs       []*batchv1.Job
	pods       []*corev1.Pod
	configMaps map[string]*corev1.ConfigMap
	pvcs       map[string]*corev1.PersistentVolumeClaim
	readme     string
}

// kubePod is a pod as a Job's template or a Pod describes it.
type kubePod struct {
	name   string // "Job cmpbench-shards", for messages
	spec   *corev1.PodSpec
	labels map[string]string
	job    *batchv1.Job // nil for a Pod
}

// indexes are the values JOB_COMPLETION_INDEX takes in the pod's copies: 0..N-1 in
// an Indexed Job, none elsewhere.
func (p kubePod) indexes() []int {
	if p.job == nil || p.job.Spec.CompletionMode == nil || *p.job.Spec.CompletionMode != batchv1.IndexedCompletion {
		return nil
	}
	n := int(ptrOr(p.job.Spec.Completions, 1))
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// kubeDecoder decodes YAML strictly into the registered types: an unknown or
// duplicate field, a field in the wrong case or an unknown kind is an error.
var kubeDecoder = sync.OnceValue(func() *kjson.Serializer {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, batchv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, s, s, kjson.SerializerOptions{Yaml: true, Strict: true})
})

// decodeKube decodes one YAML document; nil, nil for a document of comments only.
func decodeKube(doc []byte) (runtime.Object, error) {
	js, err := kyaml.ToJSON(doc)
	if err != nil {
		return nil, err
	}
	if s := string(bytes.TrimSpace(js)); s == "null" || s == "" {
		return nil, nil
	}
	obj, _, err := kubeDecoder().Decode(doc, nil, nil)
	return obj, err
}

// loadKube decodes every YAML document under deploy/kubernetes.
func loadKube(t testing.TB) *kubeManifests {
	t.Helper()
	m := &kubeManifests{configMaps: map[string]*corev1.ConfigMap{}, pvcs: map[string]*corev1.PersistentVolumeClaim{}}
	readme, err := os.ReadFile(filepath.Join(kubeDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m.readme = string(readme)
	seen := map[string]string{}
	err = filepath.WalkDir(kubeDir, func(file string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (!strings.HasSuffix(file, ".yaml") && !strings.HasSuffix(file, ".yml")) {
			return err
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		r := kyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for i := 1; ; i++ {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				return nil
			}
			at := fmt.Sprintf("%s (document %d)", filepath.Base(file), i)
			if err != nil {
				return fmt.Errorf("%s: %w", at, err)
			}
			obj, err := decodeKube(doc)
			if err != nil {
				return fmt.Errorf("%s: %w", at, err)
			}
			if obj == nil {
				continue
			}
			meta, _ := obj.(metav1.Object)
			kind := obj.GetObjectKind().GroupVersionKind().Kind
			id := kind + " " + meta.GetName()
			if prev, dup := seen[id]; dup {
				return fmt.Errorf("%s: %s is defined in %s too", at, id, prev)
			}
			seen[id] = at
			if meta.GetNamespace() != "" {
				return fmt.Errorf("%s: %s sets metadata.namespace; leave it to kubectl -n", at, id)
			}
			switch o := obj.(type) {
			case *batchv1.Job:
				m.jobs = append(m.jobs, o)
			case *corev1.Pod:
				m.pods = append(m.pods, o)
			case *corev1.ConfigMap:
				m.configMaps[o.Name] = o
			case *corev1.PersistentVolumeClaim:
				m.pvcs[o.Name] = o
			case *corev1.Secret:
				return fmt.Errorf("%s: a Secret is created with kubectl create secret (README.md), never shipped", at)
			default:
				return fmt.Errorf("%s: kind %s is not one this test checks (Job, Pod, ConfigMap, PersistentVolumeClaim); add its checks", at, kind)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (m *kubeManifests) podList() []kubePod {
	var ps []kubePod
	for _, j := range m.jobs {
		ps = append(ps, kubePod{"Job " + j.Name, &j.Spec.Template.Spec, j.Spec.Template.Labels, j})
	}
	for _, p := range m.pods {
		ps = append(ps, kubePod{"Pod " + p.Name, &p.Spec, p.Labels, nil})
	}
	return ps
}

// isCmpbench says whether a container runs cmpbench.
func isCmpbench(c *corev1.Container) bool {
	return len(c.Command) > 0 && path.Base(c.Command[0]) == "cmpbench"
}

// kubeSplitArgs splits a cmpbench command line into its flags and positional
// arguments. The manifests give every flag a value (--name value or --name=value).
func kubeSplitArgs(args []string) (flags map[string]string, pos []string) {
	flags = map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") {
			pos = append(pos, a)
			continue
		}
		if name, v, ok := strings.Cut(a[2:], "="); ok {
			flags[name] = v
		} else if i+1 < len(args) {
			flags[name] = args[i+1]
			i++
		}
	}
	return flags, pos
}

// subcommand is the cmpbench subcommand a container runs ("run", "merge").
func subcommand(c *corev1.Container) string {
	_, pos := kubeSplitArgs(c.Args)
	if len(pos) == 0 {
		return ""
	}
	return pos[0]
}

// cmpbenchPods finds the one pod with one cmpbench container running sub.
func (m *kubeManifests) cmpbenchPod(t testing.TB, sub string) (kubePod, *corev1.Container) {
	t.Helper()
	var found []kubePod
	var cs []*corev1.Container
	for _, p := range m.podList() {
		for i := range p.spec.Containers {
			if c := &p.spec.Containers[i]; isCmpbench(c) && subcommand(c) == sub {
				found, cs = append(found, p), append(cs, c)
			}
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one container running `cmpbench %s` under deploy/kubernetes, found %d", sub, len(found))
	}
	return found[0], cs[0]
}

var kubeVarRef = regexp.MustCompile(`\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// kubeExpand expands $(VAR) as the kubelet does in command and args ($$ is a $);
// a reference it cannot expand is left as written, and returned.
func kubeExpand(s string, env map[string]string) (string, []string) {
	var missing []string
	out := kubeVarRef.ReplaceAllStringFunc(s, func(ref string) string {
		if ref == "$$" {
			return "$"
		}
		name := ref[2 : len(ref)-1]
		v, ok := env[name]
		if !ok {
			missing = append(missing, name)
			return ref
		}
		return v
	})
	return out, missing
}

// kubeEnv is a container's environment as the kubelet sets it.
type kubeEnv struct {
	values     map[string]string
	fromSecret map[string]bool
}

// secretStandIn is what a test puts where the Secret's value goes: long enough and
// no common word, as cmpbench requires of a secret.
func secretStandIn(name string) string { return "k8s-test-" + strings.ToLower(name) }

// env resolves a container's environment: JOB_COMPLETION_INDEX is index in an
// Indexed Job; a ConfigMap not among the manifests is the per-run one the README
// creates, whose value is startAt; a Secret's value is secretStandIn.
func (m *kubeManifests) env(p kubePod, c *corev1.Container, index int, startAt string) (kubeEnv, []error) {
	e := kubeEnv{values: map[string]string{}, fromSecret: map[string]bool{}}
	var errs []error
	if p.indexes() != nil {
		e.values["JOB_COMPLETION_INDEX"] = strconv.Itoa(index)
	}
	for _, ef := range c.EnvFrom {
		from := "a ConfigMap"
		if ef.SecretRef != nil {
			from = "Secret " + ef.SecretRef.Name
		}
		errs = append(errs, fmt.Errorf("%s: envFrom %s: name each variable with env, so that each is checked", p.name, from))
	}
	for _, v := range c.Env {
		switch from := v.ValueFrom; {
		case from == nil:
			if looksSecret(v.Name) {
				errs = append(errs, fmt.Errorf("%s: env %s is named like a secret but has a value in the manifest; take it from a Secret (secretKeyRef)", p.name, v.Name))
			}
			e.values[v.Name], _ = kubeExpand(v.Value, e.values)
		case from.SecretKeyRef != nil:
			ref := from.SecretKeyRef
			if !m.documented("secret generic", ref.Name, ref.Key) {
				errs = append(errs, fmt.Errorf("%s: env %s comes from Secret %s key %s, whose creation README.md does not show (kubectl create secret generic %s --from-literal=%s=...)", p.name, v.Name, ref.Name, ref.Key, ref.Name, ref.Key))
			}
			e.values[v.Name], e.fromSecret[v.Name] = secretStandIn(v.Name), true
		case from.ConfigMapKeyRef != nil:
			ref := from.ConfigMapKeyRef
			if cm, ok := m.configMaps[ref.Name]; ok {
				val, ok := cm.Data[ref.Key]
				if !ok {
					errs = append(errs, fmt.Errorf("%s: env %s: ConfigMap %s has no key %s", p.name, v.Name, ref.Name, ref.Key))
				}
				e.values[v.Name] = val
				continue
			}
			if !m.documented("configmap", ref.Name, ref.Key) {
				errs = append(errs, fmt.Errorf("%s: env %s comes from ConfigMap %s, which is neither among the manifests nor created in README.md (kubectl create configmap %s --from-literal=%s=...)", p.name, v.Name, ref.Name, ref.Name, ref.Key))
			}
			e.values[v.Name] = startAt
		default:
			errs = append(errs, fmt.Errorf("%s: env %s: only values, secretKeyRef and configMapKeyRef are checked", p.name, v.Name))
		}
	}
	return e, errs
}

// documented says whether README.md shows how to create an object the manifests
// refer to but do not ship: `kubectl create <kind> NAME ... --from-literal=KEY=...`.
func (m *kubeManifests) documented(kind, name, key string) bool {
	return strings.Contains(m.readme, "kubectl create "+kind+" "+name+" ") &&
		(strings.Contains(m.readme, "--from-literal="+key+"=") || strings.Contains(m.readme, "--from-file="+key+"="))
}

// looksSecret is cmpbench's rule for variables whose values it redacts (core/config
// isSecret), applied to env names.
func looksSecret(name string) bool {
	n := strings.ToUpper(name)
	return slices.ContainsFunc([]string{"PASS", "SECRET", "TOKEN", "KEY", "CRED"}, func(w string) bool { return strings.Contains(n, w) })
}

// mountOf finds the volume that holds file in a container: its mount and volume.
func mountOf(p kubePod, c *corev1.Container, file string) (*corev1.VolumeMount, *corev1.Volume) {
	var best *corev1.VolumeMount
	for i := range c.VolumeMounts {
		vm := &c.VolumeMounts[i]
		if (file == vm.MountPath || strings.HasPrefix(file, strings.TrimSuffix(vm.MountPath, "/")+"/")) && (best == nil || len(vm.MountPath) > len(best.MountPath)) {
			best = vm
		}
	}
	if best == nil {
		return nil, nil
	}
	for i := range p.spec.Volumes {
		if p.spec.Volumes[i].Name == best.Name {
			return best, &p.spec.Volumes[i]
		}
	}
	return best, nil
}

// configFile is the text of file in a container, from the ConfigMap mounted there.
func (m *kubeManifests) configFile(p kubePod, c *corev1.Container, file string) (string, error) {
	vm, vol := mountOf(p, c, file)
	if vol == nil || vol.ConfigMap == nil {
		return "", fmt.Errorf("%s: %s is not on a ConfigMap volume", p.name, file)
	}
	cm, ok := m.configMaps[vol.ConfigMap.Name]
	if !ok {
		return "", fmt.Errorf("%s: volume %s: no ConfigMap %s among the manifests", p.name, vol.Name, vol.ConfigMap.Name)
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(file, vm.MountPath), "/")
	key := rel
	if items := vol.ConfigMap.Items; len(items) > 0 {
		key = ""
		for _, it := range items {
			if it.Path == rel {
				key = it.Key
			}
		}
	}
	text, ok := cm.Data[key]
	if !ok {
		return "", fmt.Errorf("%s: %s: ConfigMap %s has no key for %s", p.name, file, cm.Name, rel)
	}
	return text, nil
}

// localArgs are a container's args as its pod runs them, with the volumes' mount
// paths moved: a PersistentVolumeClaim's to out, a ConfigMap's to a directory
// holding the ConfigMap's files; --live on a free loopback port.
func (m *kubeManifests) localArgs(t testing.TB, p kubePod, c *corev1.Container, index int, startAt, out string) []string {
	t.Helper()
	env, errs := m.env(p, c, index, startAt)
	if len(errs) > 0 {
		t.Fatal(errors.Join(errs...))
	}
	moves := map[string]string{}
	for _, vm := range c.VolumeMounts {
		for _, vol := range p.spec.Volumes {
			switch {
			case vol.Name != vm.Name:
			case vol.PersistentVolumeClaim != nil:
				moves[vm.MountPath] = out
			case vol.ConfigMap != nil:
				dir := t.TempDir()
				cm := m.configMaps[vol.ConfigMap.Name]
				if cm == nil {
					t.Fatalf("%s: no ConfigMap %s among the manifests", p.name, vol.ConfigMap.Name)
				}
				for key, text := range cm.Data {
					name := key
					for _, it := range vol.ConfigMap.Items {
						if it.Key == key {
							name = it.Path
						}
					}
					file := filepath.Join(dir, name)
					if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				moves[vm.MountPath] = dir
			}
		}
	}
	move := func(s string) string {
		for from, to := range moves {
			if s == from || strings.HasPrefix(s, from+"/") {
				return to + s[len(from):]
			}
		}
		return s
	}
	var args []string
	for _, a := range c.Args {
		a, missing := kubeExpand(a, env.values)
		if len(missing) > 0 {
			t.Fatalf("%s: args: $(%s) is not defined", p.name, strings.Join(missing, "), $("))
		}
		if name, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a = name + "=" + move(v)
			if name == "--live" {
				// A pod's port is its own; the shards here share a machine.
				a = name + "=127.0.0.1:0"
			}
		} else {
			a = move(a)
		}
		args = append(args, a)
	}
	return args
}
