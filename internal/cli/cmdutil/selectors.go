package cmdutil

import (
	"regexp"

	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/client"
)

// ContainerSelectors are crictl's container selectors, as ps, inspect and
// exec take them; Filter turns them into one client.ContainerFilter.
type ContainerSelectors struct {
	Name, Namespace, State, Pod, Image string
	Labels                             []string
	All, Latest                        bool
	Last                               int
}

// Bind adds the selectors to fl, each help line begun with scope ("only",
// "with no CONTAINER:", "run in"). A listing (ps, inspect) also takes
// --namespace and -a/--all, and -s for --state (exec's -s is --sync).
func (s *ContainerSelectors) Bind(fl *pflag.FlagSet, scope string, listing bool) {
	fl.StringVar(&s.Name, "name", "", scope+" containers whose name matches this regular expression")
	fl.StringVarP(&s.Pod, "pod", "p", "", scope+" containers of this pod (ID, ID prefix or name)")
	fl.StringVar(&s.Image, "image", "", scope+" containers created from this image (name, tag or ID)")
	fl.StringArrayVar(&s.Labels, "label", nil, scope+" containers with this label, key=value (repeatable)")
	fl.BoolVarP(&s.Latest, "latest", "l", false, scope+" the most recently created container, in any state")
	fl.IntVarP(&s.Last, "last", "n", 0, scope+" the N most recently created containers, in any state")
	stateHelp := scope + " containers in this state: created, running, exited or unknown (default: running)"
	if !listing {
		fl.StringVar(&s.State, "state", "", stateHelp)
		return
	}
	fl.StringVarP(&s.State, "state", "s", "", stateHelp)
	fl.StringVar(&s.Namespace, "namespace", "", scope+" containers whose pod's namespace matches this regular expression")
	fl.BoolVarP(&s.All, "all", "a", false, "containers in every state, not only running ones")
}

// Filter checks the selectors and builds the filter: usage errors for a
// bad state, count, regular expression or label. -l and -n look at every
// state, as crictl's do.
func (s *ContainerSelectors) Filter() (client.ContainerFilter, error) {
	f := client.ContainerFilter{State: s.State, Image: s.Image, Pod: s.Pod, Last: s.Last, All: s.All}
	if s.Latest {
		f.Last = 1
	}
	if f.Last < 0 {
		return f, UsageErrorf("-n/--last must be 0 (all) or more, not %d", s.Last)
	}
	f.All = f.All || f.Last > 0
	if s.State != "" {
		if _, err := client.ParseContainerState(s.State); err != nil {
			return f, UsageErrorf("--state: %v", err)
		}
	}
	var err error
	f.Name, f.Namespace, f.Labels, err = compileMatchers(s.Name, s.Namespace, s.Labels)
	return f, err
}

// compileMatchers compiles --name and --namespace and parses --label.
func compileMatchers(name, namespace string, labels []string) (nameRE, namespaceRE *regexp.Regexp, labelMap map[string]string, err error) {
	if nameRE, err = CompileFilter("--name", name); err != nil {
		return nil, nil, nil, err
	}
	if namespaceRE, err = CompileFilter("--namespace", namespace); err != nil {
		return nil, nil, nil, err
	}
	labelMap, err = ParseLabels(labels)
	return nameRE, namespaceRE, labelMap, err
}

// PodSelectors are crictl's pod selectors, as pods and inspectp take them.
type PodSelectors struct {
	Name, Namespace, State string
	Labels                 []string
	Latest                 bool
	Last                   int
}

// Bind adds the selectors to fl, each help line begun with scope.
func (s *PodSelectors) Bind(fl *pflag.FlagSet, scope string) {
	fl.StringVar(&s.Name, "name", "", scope+" pods whose name matches this regular expression")
	fl.StringVar(&s.Namespace, "namespace", "", scope+" pods whose namespace matches this regular expression")
	fl.StringVarP(&s.State, "state", "s", "", scope+" pods in this state: ready or notready")
	fl.StringArrayVar(&s.Labels, "label", nil, scope+" pods with this label, key=value (repeatable)")
	fl.BoolVarP(&s.Latest, "latest", "l", false, scope+" the most recently created pod")
	fl.IntVarP(&s.Last, "last", "n", 0, scope+" the N most recently created pods")
}

// Filter checks the selectors and builds the filter (usage errors as
// ContainerSelectors.Filter).
func (s *PodSelectors) Filter() (client.PodFilter, error) {
	f := client.PodFilter{State: s.State, Last: s.Last}
	if s.Latest {
		f.Last = 1
	}
	if f.Last < 0 {
		return f, UsageErrorf("-n/--last must be 0 (all) or more, not %d", s.Last)
	}
	if s.State != "" {
		if _, err := client.ParsePodState(s.State); err != nil {
			return f, UsageErrorf("--state: %v", err)
		}
	}
	var err error
	f.Name, f.Namespace, f.Labels, err = compileMatchers(s.Name, s.Namespace, s.Labels)
	return f, err
}
