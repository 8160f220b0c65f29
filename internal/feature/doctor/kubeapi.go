package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
)

// kubeAPI is the little of the Kubernetes API the workstation walk reads,
// on client-go's REST client with the three groups it needs registered
// (core/v1, authentication/v1, authorization/v1): no clientset, whose
// every API group would be paid for at start-up.
type kubeAPI struct {
	cfg *rest.Config
	rc  *rest.RESTClient
}

func newKubeAPI(cfg *rest.Config) (*kubeAPI, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, authnv1.AddToScheme, authzv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	c := rest.CopyConfig(cfg)
	c.APIPath = "/api"
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = "crisp-doctor"
	}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("API client for %s: %w", c.Host, err)
	}
	return &kubeAPI{cfg: c, rc: rc}, nil
}

// version is GET /version.
func (k *kubeAPI) version(ctx context.Context) (*version.Info, error) {
	raw, err := raw(k.rc.Get().AbsPath("/version").Do(ctx))
	if err != nil {
		return nil, err
	}
	var v version.Info
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("GET /version answered what is not a version: %w", err)
	}
	return &v, nil
}

// whoami is a SelfSubjectReview: who the API server takes the user for.
func (k *kubeAPI) whoami(ctx context.Context) (*authnv1.SelfSubjectReview, error) {
	in := &authnv1.SelfSubjectReview{TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "SelfSubjectReview"}}
	var out authnv1.SelfSubjectReview
	err := k.rc.Post().AbsPath("/apis/authentication.k8s.io/v1/selfsubjectreviews").Body(in).Do(ctx).Into(&out)
	return &out, err
}

// mayI is a SelfSubjectAccessReview of verb on resource/sub in ns.
func (k *kubeAPI) mayI(ctx context.Context, ns string, p permission) (authzv1.SubjectAccessReviewStatus, error) {
	in := &authzv1.SelfSubjectAccessReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SelfSubjectAccessReview"},
		Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{
			Namespace: ns, Verb: p.verb, Resource: p.resource, Subresource: p.sub,
		}},
	}
	var out authzv1.SelfSubjectAccessReview
	err := k.rc.Post().AbsPath("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews").Body(in).Do(ctx).Into(&out)
	return out.Status, err
}

func (k *kubeAPI) pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	var p corev1.Pod
	err := k.rc.Get().Namespace(ns).Resource("pods").Name(name).Do(ctx).Into(&p)
	return &p, err
}

func (k *kubeAPI) node(ctx context.Context, name string) (*corev1.Node, error) {
	var n corev1.Node
	err := k.rc.Get().Resource("nodes").Name(name).Do(ctx).Into(&n)
	return &n, err
}

// kubeletHealthz is the kubelet's /healthz through the API server's
// nodes/proxy: the same API server -> kubelet connection exec takes.
func (k *kubeAPI) kubeletHealthz(ctx context.Context, node string) ([]byte, error) {
	return raw(k.rc.Get().Resource("nodes").Name(node).SubResource("proxy").Suffix("healthz").Do(ctx))
}

// raw is a result's body, or its error with the API's Status message
// (Result.Raw's error is the generic one of the HTTP status alone).
func raw(res rest.Result) ([]byte, error) {
	if err := res.Error(); err != nil {
		return nil, err
	}
	return res.Raw()
}

// preferredAddressTypes reads the API server's
// --kubelet-preferred-address-types from its static pod (kubeadm's
// component=kube-apiserver in kube-system), where the user may list it;
// "" when it cannot be seen.
func (k *kubeAPI) preferredAddressTypes(ctx context.Context) string {
	var l corev1.PodList
	if err := k.rc.Get().Namespace("kube-system").Resource("pods").Param("labelSelector", "component=kube-apiserver").Do(ctx).Into(&l); err != nil {
		return ""
	}
	for _, p := range l.Items {
		for _, c := range p.Spec.Containers {
			args := append(append([]string{}, c.Command...), c.Args...)
			for i, a := range args {
				name, value, ok := strings.Cut(a, "=")
				if name != "--kubelet-preferred-address-types" {
					continue
				}
				if !ok && i+1 < len(args) {
					value = args[i+1]
				}
				return value
			}
			if len(args) > 0 && strings.Contains(args[0], "kube-apiserver") {
				return defaultAddressTypes
			}
		}
	}
	return ""
}

// defaultAddressTypes is the API server's --kubelet-preferred-address-types
// when the flag is not given.
const defaultAddressTypes = "Hostname,InternalDNS,InternalIP,ExternalDNS,ExternalIP"

// streamURL is a pod's exec, attach or portforward subresource with its
// query, as kubectl builds it.
func (k *kubeAPI) streamURL(ns, pod, sub string, q url.Values) *url.URL {
	u := k.rc.Post().Namespace(ns).Resource("pods").Name(pod).SubResource(sub).URL()
	u.RawQuery = q.Encode()
	return u
}

// permission is one verb on one resource (and subresource).
type permission struct {
	verb, resource, sub string
}

func (p permission) String() string {
	if p.sub == "" {
		return p.verb + " " + p.resource
	}
	return p.verb + " " + p.resource + "/" + p.sub
}
