// Package deploy holds the Kubernetes manifests that run crisp smoke on
// every node (daemonset.yaml, job.yaml) and reads them strictly into
// k8s.io/api types, so that tests check the manifests users apply and the
// containerd end-to-end test runs the very pod spec they describe.
package deploy

import (
	_ "embed"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"
)

var (
	//go:embed daemonset.yaml
	daemonSetYAML []byte
	//go:embed job.yaml
	jobYAML []byte
)

// DaemonSet decodes daemonset.yaml; an unknown or misspelt field is an error.
func DaemonSet() (*appsv1.DaemonSet, error) {
	ds := &appsv1.DaemonSet{}
	if err := yaml.UnmarshalStrict(daemonSetYAML, ds); err != nil {
		return nil, fmt.Errorf("deploy/daemonset.yaml: %w", err)
	}
	return ds, nil
}

// Job decodes job.yaml; an unknown or misspelt field is an error.
func Job() (*batchv1.Job, error) {
	job := &batchv1.Job{}
	if err := yaml.UnmarshalStrict(jobYAML, job); err != nil {
		return nil, fmt.Errorf("deploy/job.yaml: %w", err)
	}
	return job, nil
}
