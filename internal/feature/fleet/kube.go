package fleet

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// KubeconfigOptions say where the API server and the credentials are, as
// kubectl's flags do: --kubeconfig (else $KUBECONFIG, else ~/.kube/config,
// else the in-cluster service account), --context, and a namespace
// (else the context's, else "default").
type KubeconfigOptions struct {
	Kubeconfig string
	Context    string
	Namespace  string
}

// Load returns the REST config and the namespace to use.
func (o KubeconfigOptions) Load() (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: o.Context}
	if o.Namespace != "" {
		overrides.Context.Namespace = o.Namespace
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("no usable kubeconfig (tried --kubeconfig, $KUBECONFIG, ~/.kube/config and the in-cluster service account): %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig namespace: %w", err)
	}
	return cfg, ns, nil
}

// Kube is the API on client-go's REST client with the core/v1 types
// alone: a scheme of its own, built when a run starts, so that crisp's
// start-up pays nothing for it (the full clientset registers every API
// group at init).
type Kube struct {
	rc rest.Interface
}

// NewKube makes the REST client for the core API group.
func NewKube(cfg *rest.Config) (*Kube, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c := rest.CopyConfig(cfg)
	c.APIPath = "/api"
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = "crisp-fleet"
	}
	if c.QPS == 0 {
		// client-go's default (5 per second) would take minutes to create
		// the pods of a few hundred nodes; at 50 a thousand took 20 s of
		// the run. The API server's priority and fairness still rules.
		c.QPS, c.Burst = 100, 200
	}
	if c.Timeout == 0 {
		c.Timeout = time.Minute
	}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("API client for %s: %w", c.Host, err)
	}
	return &Kube{rc: rc}, nil
}

func notFound(err error) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return err
}

// ListNodes lists the nodes matching a label selector ("" for all).
func (k *Kube) ListNodes(ctx context.Context, selector string) ([]corev1.Node, error) {
	var l corev1.NodeList
	err := k.rc.Get().Resource("nodes").Param("labelSelector", selector).Do(ctx).Into(&l)
	return l.Items, err
}

// GetNode gets one node; a missing one is ErrNotFound.
func (k *Kube) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	var n corev1.Node
	if err := k.rc.Get().Resource("nodes").Name(name).Do(ctx).Into(&n); err != nil {
		return nil, notFound(err)
	}
	return &n, nil
}

// CreatePod creates pod in its namespace.
func (k *Kube) CreatePod(ctx context.Context, pod *corev1.Pod) error {
	return k.rc.Post().Namespace(pod.Namespace).Resource("pods").Body(pod).Do(ctx).Error()
}

// DeletePod deletes one pod, with a short grace period.
func (k *Kube) DeletePod(ctx context.Context, namespace, name string) error {
	return k.rc.Delete().Namespace(namespace).Resource("pods").Name(name).Body(shortGrace()).Do(ctx).Error()
}

// ListPods lists the pods of namespace matching a label selector.
func (k *Kube) ListPods(ctx context.Context, namespace, selector string) ([]corev1.Pod, error) {
	var l corev1.PodList
	err := k.rc.Get().Namespace(namespace).Resource("pods").Param("labelSelector", selector).Do(ctx).Into(&l)
	return l.Items, err
}

// DeletePods deletes the pods matching selector, with a short grace period.
func (k *Kube) DeletePods(ctx context.Context, namespace, selector string) error {
	return k.rc.Delete().Namespace(namespace).Resource("pods").Param("labelSelector", selector).Body(shortGrace()).Do(ctx).Error()
}

func shortGrace() *metav1.DeleteOptions {
	grace := int64(1)
	return &metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"}, GracePeriodSeconds: &grace}
}

// PodLog returns at most limit bytes of a container's log.
func (k *Kube) PodLog(ctx context.Context, namespace, pod, container string, limit int64) ([]byte, error) {
	rc, err := k.rc.Get().Namespace(namespace).Resource("pods").Name(pod).SubResource("log").
		Param("container", container).Param("limitBytes", strconv.FormatInt(limit, 10)).Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }() // read only: a close error loses nothing
	return io.ReadAll(io.LimitReader(rc, limit))
}

// PodEvents lists the events about a pod, oldest first as the API server
// keeps them.
func (k *Kube) PodEvents(ctx context.Context, namespace, pod string) ([]corev1.Event, error) {
	var l corev1.EventList
	err := k.rc.Get().Namespace(namespace).Resource("events").
		Param("fieldSelector", "involvedObject.kind=Pod,involvedObject.name="+pod).Do(ctx).Into(&l)
	return l.Items, err
}
