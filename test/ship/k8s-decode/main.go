// k8s-decode reads multi-document YAML files (rendered charts, manifests) and decodes every
// object strictly into its Kubernetes API type: an unknown or duplicate field, a value of the
// wrong type or an unknown kind fails. It prints "kind namespace/name" for each object decoded.
//
//	k8s-decode FILE...   (- reads stdin)
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// kinds maps apiVersion/kind to a new object of its type.
var kinds = map[string]func() any{
	"v1/ConfigMap":      func() any { return &corev1.ConfigMap{} },
	"v1/ServiceAccount": func() any { return &corev1.ServiceAccount{} },
	"v1/Pod":            func() any { return &corev1.Pod{} },
	"v1/Service":        func() any { return &corev1.Service{} },
	"apps/v1/DaemonSet": func() any { return &appsv1.DaemonSet{} },
	"rbac.authorization.k8s.io/v1/ClusterRole":        func() any { return &rbacv1.ClusterRole{} },
	"rbac.authorization.k8s.io/v1/ClusterRoleBinding": func() any { return &rbacv1.ClusterRoleBinding{} },
}

var separator = regexp.MustCompile(`(?m)^---[ \t]*$`)

func decodeFile(name string, data []byte) (int, error) {
	n := 0
	for i, doc := range separator.Split(string(data), -1) {
		if len(bytes.TrimSpace(stripComments([]byte(doc)))) == 0 {
			continue
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			return n, fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		newObject, ok := kinds[meta.APIVersion+"/"+meta.Kind]
		if !ok {
			return n, fmt.Errorf("%s: document %d: no API type for %s %s", name, i, meta.APIVersion, meta.Kind)
		}
		obj := newObject()
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			return n, fmt.Errorf("%s: document %d (%s): %w", name, i, meta.Kind, err)
		}
		m := obj.(metav1.Object)
		fmt.Printf("%s %s/%s\n", meta.Kind, m.GetNamespace(), m.GetName())
		n++
	}
	return n, nil
}

var comment = regexp.MustCompile(`(?m)^\s*#.*$`)

func stripComments(b []byte) []byte { return comment.ReplaceAll(b, nil) }

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: k8s-decode FILE...")
		os.Exit(2)
	}
	for _, name := range os.Args[1:] {
		var data []byte
		var err error
		if name == "-" {
			data, err = io.ReadAll(os.Stdin)
		} else {
			data, err = os.ReadFile(name)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "k8s-decode: %v\n", err)
			os.Exit(1)
		}
		n, err := decodeFile(name, data)
		if err != nil {
			fmt.Fprintf(os.Stderr, "k8s-decode: %v\n", err)
			os.Exit(1)
		}
		if n == 0 {
			fmt.Fprintf(os.Stderr, "k8s-decode: %s: no object\n", name)
			os.Exit(1)
		}
	}
}
