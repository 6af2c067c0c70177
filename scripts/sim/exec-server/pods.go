package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// containerRecord and podRecord mirror scripts/sim/kubelet/state.ts (the stand-in writes them).
type containerRecord struct {
	Name         string            `json:"name"`
	Pid          *int              `json:"pid"`
	LogFile      string            `json:"logFile"`
	Env          map[string]string `json:"env"`
	RestartCount int               `json:"restartCount"`
}

type podRecord struct {
	Namespace  string            `json:"namespace"`
	Name       string            `json:"name"`
	UID        string            `json:"uid"`
	Netns      string            `json:"netns"`
	UtsFile    string            `json:"utsFile"`
	HostVeth   string            `json:"hostVeth"`
	IP         string            `json:"ip"`
	Containers []containerRecord `json:"containers"`
}

type podStore struct{ dir string }

// find reads the records fresh on every request: the stand-in changes them as pods come and go.
func (s *podStore) find(namespace, name, uid string) (*podRecord, error) {
	files, err := filepath.Glob(filepath.Join(s.dir, "pods", "*.json"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var rec podRecord
		if json.Unmarshal(data, &rec) != nil {
			continue
		}
		if rec.Namespace == namespace && rec.Name == name && (uid == "" || rec.UID == uid) {
			return &rec, nil
		}
	}
	return nil, fmt.Errorf("pod %s/%s is not running on this node", namespace, name)
}

func (p *podRecord) container(name string) (*containerRecord, error) {
	for i := range p.Containers {
		if p.Containers[i].Name == name {
			return &p.Containers[i], nil
		}
	}
	if name == "" && len(p.Containers) == 1 {
		return &p.Containers[0], nil
	}
	return nil, fmt.Errorf("container %q not found in pod %s/%s", name, p.Namespace, p.Name)
}
