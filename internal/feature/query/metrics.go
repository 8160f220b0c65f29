package query

import (
	"context"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/client"
)

// MetricDescs prints the runtime's metric descriptors (crictl
// metricdescs): the ListMetricDescriptors response as JSON or YAML.
func MetricDescs(ctx context.Context, c *client.Client, p output.Printer) error {
	var resp *runtimeapi.ListMetricDescriptorsResponse
	err := c.Call(ctx, "list metric descriptors", func(ctx context.Context) (err error) {
		resp, err = c.Runtime.ListMetricDescriptors(ctx, &runtimeapi.ListMetricDescriptorsRequest{})
		return err
	})
	if err != nil {
		return err
	}
	return p.PrintProto(resp, nil)
}

// PodMetrics prints the pods' metrics (crictl metricsp): the
// ListPodSandboxMetrics response as JSON or YAML.
func PodMetrics(ctx context.Context, c *client.Client, p output.Printer) error {
	var resp *runtimeapi.ListPodSandboxMetricsResponse
	err := c.Call(ctx, "list pod sandbox metrics", func(ctx context.Context) (err error) {
		resp, err = c.Runtime.ListPodSandboxMetrics(ctx, &runtimeapi.ListPodSandboxMetricsRequest{})
		return err
	})
	if err != nil {
		return err
	}
	return p.PrintProto(resp, nil)
}

// UpdateRuntimeConfig sends the pod CIDR to the runtime (crictl
// update-runtime-config); an empty cidr sends no network config.
func UpdateRuntimeConfig(ctx context.Context, c *client.Client, cidr string, setCIDR bool) error {
	cfg := &runtimeapi.RuntimeConfig{}
	if setCIDR {
		cfg.NetworkConfig = &runtimeapi.NetworkConfig{PodCidr: cidr}
	}
	return c.Call(ctx, "update runtime config", func(ctx context.Context) error {
		_, err := c.Runtime.UpdateRuntimeConfig(ctx, &runtimeapi.UpdateRuntimeConfigRequest{RuntimeConfig: cfg})
		return err
	})
}
