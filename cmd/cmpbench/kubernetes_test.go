package main

// The Kubernetes manifests under deploy/kubernetes (design.md §7), decoded strictly
// with Kubernetes' own types and checked against the cmpbench they run: a typo, a
// renamed flag or an unset variable would otherwise surface in a cluster, after
// --start-at, as a shard that never measured.

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/plan"
)

// kubernetesShardArgs returns the args that pod index of the shard Job
// (deploy/kubernetes/shards.yaml) runs cmpbench with: $(JOB_COMPLETION_INDEX) is
// index, the start-at ConfigMap's value is startAt, the shared volume (/results) is
// out, and the ConfigMap's mount (/etc/cmpbench) a temporary directory holding its
// files. The systems file there names the cluster's endpoints: a local test adds its
// own --config after these args (the last one counts) defining the same system names
// at loopback endpoints, and --scale to shorten the suite.
func kubernetesShardArgs(t testing.TB, index int, startAt string, out string) []string {
	t.Helper()
	m := loadKube(t)
	p, c := m.cmpbenchPod(t, "run")
	if idx := p.indexes(); index < 0 || index >= len(idx) {
		t.Fatalf("%s has shard indexes 0 to %d, not %d", p.name, len(idx)-1, index)
	}
	return m.localArgs(t, p, c, index, startAt, out)
}

// kubernetesMergeArgs returns the args of the merge Job (deploy/kubernetes/merge.yaml)
// as kubernetesShardArgs does those of the shards.
func kubernetesMergeArgs(t testing.TB, startAt string, out string) []string {
	t.Helper()
	m := loadKube(t)
	p, c := m.cmpbenchPod(t, "merge")
	return m.localArgs(t, p, c, 0, startAt, out)
}

// The helpers give local processes the pods' command lines: every shard writes
// where the merge reads, on the directory that stands for the shared volume, and
// reads the ConfigMap's files.
func TestKubernetesLocalArgs(t *testing.T) {
	p, _ := loadKube(t).cmpbenchPod(t, "run")
	out := t.TempDir()
	n := len(p.indexes())
	var shardsOut string
	for i := 0; i < n; i++ {
		args := kubernetesShardArgs(t, i, kubeSampleStartAt, out)
		flags, _ := kubeSplitArgs(args)
		if want := fmt.Sprintf("%d/%d", i, n); flags["shard"] != want || flags["start-at"] != kubeSampleStartAt {
			t.Errorf("shard %d: --shard %q --start-at %q, want %q and %q", i, flags["shard"], flags["start-at"], want, kubeSampleStartAt)
		}
		if !strings.HasPrefix(flags["out"], out+"/") || (i > 0 && flags["out"] != shardsOut) {
			t.Errorf("shard %d: --out %s, want one directory under %s for every shard", i, flags["out"], out)
		}
		shardsOut = flags["out"]
		for _, f := range []string{flags["config"], flags["suite"]} {
			if _, err := os.Stat(f); filepath.IsAbs(f) && err != nil {
				t.Errorf("shard %d: %v", i, err)
			}
		}
	}
	flags, pos := kubeSplitArgs(kubernetesMergeArgs(t, kubeSampleStartAt, out))
	if len(pos) < 2 || pos[len(pos)-1] != shardsOut || !strings.HasPrefix(flags["out"], out+"/") {
		t.Errorf("merge: reads %q and writes %s; want the shards' %s and a directory under %s", pos, flags["out"], shardsOut, out)
	}
}

func TestKubernetesDecodingIsStrict(t *testing.T) {
	const job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: c\n          %s: registry.example.com/cmpbench:latest\n"
	for _, tc := range []struct {
		name, doc string
		ok        bool
	}{
		{"valid", fmt.Sprintf(job, "image"), true},
		{"unknown field", fmt.Sprintf(job, "imagePullPolcy"), false},
		{"field in the wrong case", fmt.Sprintf(job, "Image"), false},
		{"duplicate field", fmt.Sprintf(job, "image") + "          image: busybox\n", false},
		{"unknown kind", strings.Replace(fmt.Sprintf(job, "image"), "kind: Job", "kind: Jobs", 1), false},
		{"wrong type", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: three}\n", false},
	} {
		obj, err := decodeKube([]byte(tc.doc))
		if tc.ok != (err == nil) || (tc.ok && obj == nil) {
			t.Errorf("%s: decoded %T, error %v", tc.name, obj, err)
		}
	}
}

func TestKubernetesShardJob(t *testing.T) {
	m := loadKube(t)
	p, c := m.cmpbenchPod(t, "run")
	j := p.job
	if j == nil || j.Spec.CompletionMode == nil || *j.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("%s: `cmpbench run` runs in an Indexed Job (completionMode: Indexed), the completion index being the shard", p.name)
	}
	n := ptrOr(j.Spec.Completions, 0)
	if n < 2 || ptrOr(j.Spec.Parallelism, 1) != n {
		t.Errorf("%s: parallelism %d and completions %d must be equal, at least 2: every shard runs at once", p.name, ptrOr(j.Spec.Parallelism, 1), n)
	}
	if ptrOr(j.Spec.BackoffLimit, 6) != 0 || p.spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("%s: backoffLimit 0 and restartPolicy Never: a shard run again would measure at the wrong time", p.name)
	}
	if ptrOr(j.Spec.ActiveDeadlineSeconds, 0) <= 0 {
		t.Errorf("%s: activeDeadlineSeconds bounds the run", p.name)
	}
	flags, _ := kubeSplitArgs(c.Args)
	if want := fmt.Sprintf("$(JOB_COMPLETION_INDEX)/%d", n); flags["shard"] != want {
		t.Errorf("%s: --shard %q, want %q", p.name, flags["shard"], want)
	}
	startVar := strings.TrimSuffix(strings.TrimPrefix(flags["start-at"], "$("), ")")
	if i := slices.IndexFunc(c.Env, func(v corev1.EnvVar) bool { return v.Name == startVar }); i < 0 ||
		c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.ConfigMapKeyRef == nil {
		t.Errorf("%s: --start-at %q must be $(VAR) with VAR from a ConfigMap, so that every shard has the same", p.name, flags["start-at"])
	}
	if !strings.Contains(flags["out"], "$("+startVar+")") {
		t.Errorf("%s: --out %q must hold $(%s): a run of its own directory, so that it never meets an earlier run's archives or meeting files", p.name, flags["out"], startVar)
	}
	// One shard per node, and never kept off a node by a pod that is not a shard.
	var selectors []*metav1.LabelSelector
	if a := p.spec.Affinity; a != nil && a.PodAntiAffinity != nil {
		for _, term := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			if term.TopologyKey == kubeHostname && len(term.Namespaces) == 0 && term.NamespaceSelector == nil {
				selectors = append(selectors, term.LabelSelector)
			}
		}
	}
	for _, sc := range p.spec.TopologySpreadConstraints {
		if sc.TopologyKey == kubeHostname && sc.MaxSkew == 1 && sc.WhenUnsatisfiable == corev1.DoNotSchedule {
			selectors = append(selectors, sc.LabelSelector)
		}
	}
	spread := false
	for _, ls := range selectors {
		sel, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil {
			t.Fatal(err)
		}
		spread = spread || sel.Matches(labels.Set(p.labels))
		for _, other := range m.podList() {
			if other.name != p.name && sel.Matches(labels.Set(other.labels)) {
				t.Errorf("%s: its anti-affinity selects %s's pods too, which would keep a shard off their node", p.name, other.name)
			}
		}
	}
	if !spread {
		t.Errorf("%s: needs a required podAntiAffinity (or a DoNotSchedule topologySpreadConstraint, maxSkew 1) on %s selecting its own pods: one shard per node", p.name, kubeHostname)
	}
	// Guaranteed QoS, whole CPUs.
	for _, ct := range append(slices.Clone(p.spec.InitContainers), p.spec.Containers...) {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, okReq := ct.Resources.Requests[r]
			lim, okLim := ct.Resources.Limits[r]
			if !okReq || !okLim || req.Cmp(lim) != 0 {
				t.Errorf("%s: container %s: %s requests and limits must be given and equal (Guaranteed QoS for a load generator)", p.name, ct.Name, r)
			}
		}
		if cpu := ct.Resources.Limits.Cpu(); cpu.MilliValue()%1000 != 0 {
			t.Errorf("%s: container %s: CPU %s is not whole CPUs", p.name, ct.Name, cpu)
		}
	}
}

func TestKubernetesMergeJob(t *testing.T) {
	m := loadKube(t)
	sp, sc := m.cmpbenchPod(t, "run")
	mp, mc := m.cmpbenchPod(t, "merge")
	if mp.job == nil || mp.indexes() != nil {
		t.Fatalf("%s: the merge runs in a Job of one pod", mp.name)
	}
	if sc.Image != mc.Image {
		t.Errorf("the shards run %s and the merge %s: one cmpbench for both", sc.Image, mc.Image)
	}
	// Where a path lands: the claim and the path inside it.
	where := func(p kubePod, c *corev1.Container, file string) string {
		env, errs := m.env(p, c, 0, kubeSampleStartAt)
		if len(errs) > 0 {
			t.Fatal(errors.Join(errs...))
		}
		file, _ = kubeExpand(file, env.values)
		vm, vol := mountOf(p, c, file)
		if vol == nil || vol.PersistentVolumeClaim == nil || vm.ReadOnly {
			t.Errorf("%s: %s is not on a writable PersistentVolumeClaim", p.name, file)
			return ""
		}
		return vol.PersistentVolumeClaim.ClaimName + ":" + path.Clean("/"+strings.TrimPrefix(file, vm.MountPath))
	}
	sFlags, _ := kubeSplitArgs(sc.Args)
	mFlags, mPos := kubeSplitArgs(mc.Args)
	shards := where(sp, sc, sFlags["out"])
	if len(mPos) != 2 || where(mp, mc, mPos[1]) != shards {
		t.Errorf("%s: merges %q, want the shards' --out %s", mp.name, mPos, sFlags["out"])
	}
	if merged := where(mp, mc, mFlags["out"]); merged == shards || strings.HasPrefix(merged, shards+"/") {
		t.Errorf("%s: --out %s is where the shards' archives are: the merged archive goes elsewhere", mp.name, mFlags["out"])
	}
	wait, err := time.ParseDuration(mFlags["wait"])
	if err != nil {
		t.Fatalf("%s: --wait: %v", mp.name, err)
	}
	shardDeadline := time.Duration(ptrOr(sp.job.Spec.ActiveDeadlineSeconds, 0)) * time.Second
	mergeDeadline := time.Duration(ptrOr(mp.job.Spec.ActiveDeadlineSeconds, 0)) * time.Second
	if wait < shardDeadline || mergeDeadline <= wait {
		t.Errorf("%s: --wait %s must be at least the shards' deadline %s, and its own deadline %s longer still", mp.name, wait, shardDeadline, mergeDeadline)
	}
}

func TestKubernetesPodsVolumesAndEnv(t *testing.T) {
	m := loadKube(t)
	claimUsers := map[string]int32{}
	for _, p := range m.podList() {
		mounted := map[string]bool{}
		for _, c := range append(slices.Clone(p.spec.InitContainers), p.spec.Containers...) {
			if strings.Contains(c.Image, "cmpbench") && !isCmpbench(&c) {
				t.Errorf("%s: container %s runs the cmpbench image without command [/usr/local/bin/cmpbench]", p.name, c.Name)
			}
			paths := map[string]bool{}
			for _, vm := range c.VolumeMounts {
				mounted[vm.Name] = true
				if paths[vm.MountPath] {
					t.Errorf("%s: container %s mounts two volumes at %s", p.name, c.Name, vm.MountPath)
				}
				paths[vm.MountPath] = true
				if !slices.ContainsFunc(p.spec.Volumes, func(v corev1.Volume) bool { return v.Name == vm.Name }) {
					t.Errorf("%s: container %s mounts %s, which is not a volume of the pod", p.name, c.Name, vm.Name)
				}
			}
			env, errs := m.env(p, &c, 0, kubeSampleStartAt)
			for _, err := range errs {
				t.Error(err)
			}
			for _, a := range append(slices.Clone(c.Command), c.Args...) {
				_, missing := kubeExpand(a, env.values)
				for _, name := range missing {
					t.Errorf("%s: container %s: %q refers to $(%s), which its env does not define (Kubernetes would pass it on as written)", p.name, c.Name, a, name)
				}
				for _, ref := range kubeVarRef.FindAllStringSubmatch(a, -1) {
					if env.fromSecret[ref[1]] {
						t.Errorf("%s: container %s: the secret %s in args shows in the pod's spec and process list; the systems file takes it as ${%s}", p.name, c.Name, ref[1], ref[1])
					}
				}
			}
		}
		for _, v := range p.spec.Volumes {
			if !mounted[v.Name] {
				t.Errorf("%s: volume %s is mounted by no container", p.name, v.Name)
			}
			switch {
			case v.ConfigMap != nil:
				cm, ok := m.configMaps[v.ConfigMap.Name]
				if !ok {
					t.Errorf("%s: volume %s: no ConfigMap %s among the manifests", p.name, v.Name, v.ConfigMap.Name)
				}
				for _, it := range v.ConfigMap.Items {
					if _, ok := cm.Data[it.Key]; cm != nil && !ok {
						t.Errorf("%s: volume %s: ConfigMap %s has no key %s", p.name, v.Name, cm.Name, it.Key)
					}
				}
			case v.PersistentVolumeClaim != nil:
				if _, ok := m.pvcs[v.PersistentVolumeClaim.ClaimName]; !ok {
					t.Errorf("%s: volume %s: no PersistentVolumeClaim %s among the manifests", p.name, v.Name, v.PersistentVolumeClaim.ClaimName)
				}
				n := int32(1)
				if p.job != nil {
					n = ptrOr(p.job.Spec.Parallelism, 1)
				}
				claimUsers[v.PersistentVolumeClaim.ClaimName] += n
			}
		}
	}
	for name, pvc := range m.pvcs {
		if claimUsers[name] == 0 {
			t.Errorf("PersistentVolumeClaim %s is used by no pod", name)
		}
		if claimUsers[name] > 1 && !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
			t.Errorf("PersistentVolumeClaim %s is mounted by %d pods at once, on different nodes: it must be ReadWriteMany", name, claimUsers[name])
		}
	}
}

// The systems file and suite the shards read, and the secrets they take.
func TestKubernetesSystemsAndSecrets(t *testing.T) {
	m := loadKube(t)
	p, c := m.cmpbenchPod(t, "run")
	env, errs := m.env(p, c, 0, kubeSampleStartAt)
	if len(errs) > 0 {
		t.Fatal(errors.Join(errs...))
	}
	for name, v := range env.values {
		t.Setenv(name, v)
	}
	flags, _ := kubeSplitArgs(c.Args)
	systemsText, err := m.configFile(p, c, flags["config"])
	if err != nil {
		t.Fatalf("--config: %v", err)
	}
	systems, err := config.LoadSystemsData(flags["config"], []byte(systemsText))
	if err != nil {
		t.Fatalf("the systems file does not load: %v", err)
	}
	names := strings.Split(flags["systems"], ",")
	for _, n := range names {
		sys, err := systems.Get(n)
		if err != nil {
			t.Errorf("--systems %s: %v", n, err)
		} else if sys.Provisioned() {
			t.Errorf("--systems %s: a sharded system is an endpoint every shard reaches, not a server cmpbench starts", n)
		}
	}
	refs := map[string]bool{}
	for _, r := range regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`).FindAllStringSubmatch(systemsText, -1) {
		refs[r[1]] = true
		if _, ok := env.values[r[1]]; !ok {
			t.Errorf("the systems file refers to ${%s}, which %s's env does not set", r[1], p.name)
		}
		if looksSecret(r[1]) && !env.fromSecret[r[1]] {
			t.Errorf("${%s} is named like a secret but does not come from a Secret", r[1])
		}
	}
	for name := range env.fromSecret {
		if !refs[name] {
			t.Errorf("%s takes %s from a Secret, but the systems file never refers to ${%s}", p.name, name, name)
		}
	}
	for _, s := range systems.Secrets {
		if !strings.HasPrefix(s, secretStandIn("")) {
			t.Errorf("cmpbench redacts a value that does not come from a Secret (%q)", s)
		}
	}
	for _, cm := range m.configMaps {
		if len(cm.BinaryData) > 0 {
			t.Errorf("ConfigMap %s has binaryData, which this test cannot read for secrets", cm.Name)
		}
		for key, text := range cm.Data {
			for _, s := range secretValues(text) {
				t.Errorf("ConfigMap %s key %s holds what looks like a secret (%s); secrets come from a Secret as ${VAR}", cm.Name, key, s)
			}
		}
	}
	if strings.HasPrefix(flags["suite"], "/") {
		suiteText, err := m.configFile(p, c, flags["suite"])
		if err != nil {
			t.Fatalf("--suite: %v", err)
		}
		suite, err := plan.ParseSuite(flags["suite"], []byte(suiteText))
		if err != nil {
			t.Fatalf("the suite does not load: %v", err)
		}
		if _, err := plan.Build(suite, names, 1, 1, 1); err != nil {
			t.Errorf("the suite's plan: %v", err)
		}
	}
}

var (
	secretField = regexp.MustCompile(`(?i)\b([a-z0-9_]*(?:password|passwd|secret|token|access_?key|api_?key|credential)[a-z0-9_]*)\s*[:=]\s*("[^"]*"|'[^']*'|[^\s,}\]#]+)`)
	privateKey  = regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`)
	onlyEnvRef  = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*\}$`)
)

// secretValues finds what looks like a secret written into a text: a field named
// like one whose value is not a ${VAR} reference, or a PEM private key.
func secretValues(text string) []string {
	var found []string
	for _, f := range secretField.FindAllStringSubmatch(text, -1) {
		if v := strings.Trim(f[2], `"'`); !onlyEnvRef.MatchString(v) {
			found = append(found, f[1]+": "+f[2])
		}
	}
	if privateKey.MatchString(text) {
		found = append(found, "a PEM private key")
	}
	return found
}

func TestKubernetesSecretValues(t *testing.T) {
	for text, want := range map[string]int{
		`auth: {username: bench, password: "${VALKEY_PASSWORD}"}`: 0,
		`auth: {access_key: "${AMR_ACCESS_KEY}"}`:                 0,
		"key_prefix: kv_\nvalue_size: 1024":                       0,
		`auth: {username: bench, password: hunter22}`:             1,
		"  access_key: 'Zm9vYmFy'\n":                              1,
		"API_TOKEN=abc123":                                        1,
		"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n":                 1,
	} {
		if got := secretValues(text); len(got) != want {
			t.Errorf("%q: found %q, want %d", text, got, want)
		}
	}
}

// The image deploy/Dockerfile builds is the one the manifests run.
func TestKubernetesDockerfile(t *testing.T) {
	read := func(file string) string {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	dockerfile, makefile, gomod := read("../../deploy/Dockerfile"), read("../../Makefile"), read("../../go.mod")
	for _, s := range []string{"CGO_ENABLED=0", "-trimpath", "./cmd/cmpbench"} {
		if !strings.Contains(dockerfile, s) {
			t.Errorf("deploy/Dockerfile does not build with %s", s)
		}
	}
	xs := regexp.MustCompile(`-X (\S+)=`)
	ldflags := regexp.MustCompile(`(?m)^LDFLAGS\s*:=.*$`).FindString(makefile)
	want, got := xs.FindAllStringSubmatch(ldflags, -1), xs.FindAllStringSubmatch(dockerfile, -1)
	if len(want) == 0 || fmt.Sprint(want) != fmt.Sprint(got) {
		t.Errorf("deploy/Dockerfile sets %v with -ldflags -X, the Makefile %v", got, want)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(gomod)
	if arg := regexp.MustCompile(`(?m)^ARG GO_VERSION=(\S+)$`).FindStringSubmatch(dockerfile); arg == nil || goVersion == nil || arg[1] != goVersion[1] {
		t.Errorf("deploy/Dockerfile's GO_VERSION %v is not go.mod's go %v", arg, goVersion)
	}
	users := regexp.MustCompile(`(?m)^USER (\S+)$`).FindAllStringSubmatch(dockerfile, -1)
	if len(users) == 0 || slices.Contains([]string{"root", "0", "0:0", "root:root"}, users[len(users)-1][1]) {
		t.Errorf("deploy/Dockerfile's image must run as a non-root USER, has %v", users)
	}
	bin := regexp.MustCompile(`(?m)^COPY --from=\S+ \S+ (\S+)$`).FindStringSubmatch(dockerfile)
	if bin == nil || !strings.Contains(dockerfile, `ENTRYPOINT ["`+bin[1]+`"]`) {
		t.Fatalf("deploy/Dockerfile: no COPY of the binary that is the ENTRYPOINT")
	}
	for _, p := range loadKube(t).podList() {
		for _, c := range p.spec.Containers {
			if isCmpbench(&c) && c.Command[0] != bin[1] {
				t.Errorf("%s: container %s runs %s; the image has cmpbench at %s", p.name, c.Name, c.Command[0], bin[1])
			}
		}
	}
}

// startAtSoon is a --start-at a run could be given now: an hour ahead.
func startAtSoon() string {
	return time.Now().UTC().Add(time.Hour).Truncate(time.Second).Format(time.RFC3339)
}

// Every cmpbench container's args, as the kubelet expands them, parse with the
// flags of the subcommand they name.
func TestKubernetesArgsParseWithCLI(t *testing.T) {
	m := loadKube(t)
	for _, p := range m.podList() {
		for _, c := range p.spec.Containers {
			if !isCmpbench(&c) {
				continue
			}
			indexes := p.indexes()
			if indexes == nil {
				indexes = []int{0}
			}
			for _, i := range indexes {
				env, _ := m.env(p, &c, i, startAtSoon())
				var args []string
				for _, a := range c.Args {
					a, _ = kubeExpand(a, env.values)
					args = append(args, a)
				}
				where := fmt.Sprintf("%s (index %d): cmpbench %s", p.name, i, strings.Join(args, " "))
				root := newRoot()
				cmd, rest, err := root.Find(args)
				if err != nil || cmd == root {
					t.Errorf("%s: no subcommand: %v", where, err)
					continue
				}
				if err := cmd.ParseFlags(rest); err != nil {
					t.Errorf("%s: %s: %v", where, cmd.Name(), err)
					continue
				}
				if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
					t.Errorf("%s: %s: %v", where, cmd.Name(), err)
				}
			}
		}
	}
}

// Each shard's run, with its pod's args, passes `--dry-run`: the systems file,
// the suite and the sharding flags together, as cmpbench reads them.
func TestKubernetesShardDryRun(t *testing.T) {
	m := loadKube(t)
	p, c := m.cmpbenchPod(t, "run")
	startAt := startAtSoon()
	dir := t.TempDir()
	for _, i := range p.indexes() {
		env, _ := m.env(p, c, i, startAt)
		var environ []string
		for name, v := range env.values {
			environ = append(environ, name+"="+v)
		}
		args := append(kubernetesShardArgs(t, i, startAt, filepath.Join(dir, "results")), "--dry-run")
		if r := cli(t, dir, environ, args...); r.code != 0 {
			t.Errorf("shard %d: cmpbench %s: exit %d\n%s", i, strings.Join(args, " "), r.code, r.stderr)
		}
	}
}
