package fleet

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/crisp-cri/crisp/internal/base/outfile"
)

// counted is the API with each call counted by its request (verb and
// resource), so that a run can say what it cost the API server: the
// figures docs/fleet.md lists per node come from here (-v).
type counted struct {
	API
	mu sync.Mutex
	n  map[string]int
}

func (c *counted) add(req string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[req]++
}

func (c *counted) ListNodes(ctx context.Context, selector string) ([]corev1.Node, error) {
	c.add("LIST nodes")
	return c.API.ListNodes(ctx, selector)
}

func (c *counted) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	c.add("GET nodes")
	return c.API.GetNode(ctx, name)
}

func (c *counted) CreatePod(ctx context.Context, pod *corev1.Pod) error {
	c.add("CREATE pods")
	return c.API.CreatePod(ctx, pod)
}

func (c *counted) DeletePod(ctx context.Context, namespace, name string) error {
	c.add("DELETE pods")
	return c.API.DeletePod(ctx, namespace, name)
}

func (c *counted) ListPods(ctx context.Context, namespace, selector string) ([]corev1.Pod, error) {
	c.add("LIST pods")
	return c.API.ListPods(ctx, namespace, selector)
}

func (c *counted) DeletePods(ctx context.Context, namespace, selector string) error {
	c.add("DELETECOLLECTION pods")
	return c.API.DeletePods(ctx, namespace, selector)
}

func (c *counted) PodLog(ctx context.Context, namespace, pod, container string, limit int64) ([]byte, error) {
	c.add("GET pods/log")
	return c.API.PodLog(ctx, namespace, pod, container, limit)
}

func (c *counted) PodEvents(ctx context.Context, namespace, pod string) ([]corev1.Event, error) {
	c.add("LIST events")
	return c.API.PodEvents(ctx, namespace, pod)
}

// Requests says what the run asked of the API server, by request, most
// first: "LIST pods 57, CREATE pods 1000, ...".
func (r *Runner) Requests() string {
	if r.count == nil {
		return "none"
	}
	r.count.mu.Lock()
	defer r.count.mu.Unlock()
	reqs := make([]string, 0, len(r.count.n))
	total := 0
	for req, n := range r.count.n {
		reqs = append(reqs, req)
		total += n
	}
	sort.Slice(reqs, func(i, j int) bool {
		if r.count.n[reqs[i]] != r.count.n[reqs[j]] {
			return r.count.n[reqs[i]] > r.count.n[reqs[j]]
		}
		return reqs[i] < reqs[j]
	})
	parts := make([]string, len(reqs))
	for i, req := range reqs {
		parts[i] = fmt.Sprintf("%s %d", req, r.count.n[req])
	}
	return fmt.Sprintf("%d requests: %s", total, strings.Join(parts, ", "))
}

// saveLog writes node n's crisp log to SaveLogs/NODE.MODE.log (for CI
// artifacts, and `crisp report DIR/*` later). A node name is a DNS
// subdomain (the API server checks): no slash, no leading dot; anything
// else is refused rather than written elsewhere.
func (r *Runner) saveLog(n *node, log []byte) {
	if r.SaveLogs == "" {
		return
	}
	name := n.name + "." + r.Mode + ".log"
	if strings.ContainsAny(n.name, `/\`) || strings.HasPrefix(n.name, ".") || filepath.Base(name) != name {
		r.track.say(fmt.Sprintf("%s: not saving its log under a name that is no file name", n.name))
		return
	}
	if err := writeLog(filepath.Join(r.SaveLogs, name), log); err != nil {
		r.track.say(fmt.Sprintf("%s: saving its log: %v", n.name, err))
	}
}

// writeLog writes a saved log through outfile.Create: the folder is the
// user's, but whatever sits at the name may have been planted (a FIFO
// would hang the run, a link be written through).
func writeLog(path string, log []byte) error {
	f, err := outfile.Create(path, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(log)
	return errors.Join(err, f.Close())
}
