package main

import (
	"encoding/json"
	"fmt"
	"os"
)

// Scenario is one differential test case (see ../DIFF.md). Protobuf-valued fields hold
// protobuf JSON and are decoded with protojson where they are used.
type Scenario struct {
	Description string `json:"description"`
	// Timeouts handed to the runtime; 0 keeps the runtime's default.
	RequestTimeoutMs      int64 `json:"requestTimeoutMs"`
	RegistrationTimeoutMs int64 `json:"registrationTimeoutMs"`
	// The builtin default validator's configuration, with Go's YAML field names; absent = off.
	DefaultValidator *DefaultValidator `json:"defaultValidator"`
	// What the runtime's synchronize callback hands to plugins.
	State struct {
		Pods       []json.RawMessage `json:"pods"`
		Containers []json.RawMessage `json:"containers"`
	} `json:"state"`
	// When set, the runtime's synchronize callback fails with this error instead of
	// synchronizing (so Start fails).
	SyncError string `json:"syncError"`
	// What the runtime's update callback answers to unsolicited updates.
	UpdateFn struct {
		Failed []json.RawMessage `json:"failed"`
		Error  string            `json:"error"`
	} `json:"updateFn"`
	// Pre-installed plugins: executables in the plugin directory, launched by the runtime.
	Preinstalled []Preinstalled `json:"preinstalled"`
	// Files of the configuration directory, by file name.
	Conf map[string]string `json:"conf"`
	// Other files of the plugin directory, by file name (mode 0644 unless Executable).
	PluginFiles []PluginFile `json:"pluginFiles"`
	// External plugins, started by the driver one after the other before the first step.
	Plugins []External `json:"plugins"`
	// What the driver does once every plugin is in place, in order.
	Steps []Step `json:"steps"`
}

// DefaultValidator mirrors the default validator's configuration.
type DefaultValidator struct {
	Enable                                bool     `json:"enable"`
	RejectOCIHookAdjustment               bool     `json:"rejectOCIHookAdjustment"`
	RejectRuntimeDefaultSeccompAdjustment bool     `json:"rejectRuntimeDefaultSeccompAdjustment"`
	RejectUnconfinedSeccompAdjustment     bool     `json:"rejectUnconfinedSeccompAdjustment"`
	RejectCustomSeccompAdjustment         bool     `json:"rejectCustomSeccompAdjustment"`
	RejectNamespaceAdjustment             bool     `json:"rejectNamespaceAdjustment"`
	RejectSysctlAdjustment                bool     `json:"rejectSysctlAdjustment"`
	RequiredPlugins                       []string `json:"requiredPlugins"`
	TolerateMissingPluginsAnnotation      string   `json:"tolerateMissingPluginsAnnotation"`
}

// Preinstalled is a plugin the runtime launches from its plugin directory.
type Preinstalled struct {
	File   string `json:"file"` // "NN-base"
	Script Script `json:"script"`
}

// PluginFile is any other file placed in the plugin directory.
type PluginFile struct {
	Name       string `json:"name"`
	Content    string `json:"content"`
	Executable bool   `json:"executable"`
}

// External is a plugin that connects to the runtime's socket.
type External struct {
	Idx    string `json:"idx"`
	Name   string `json:"name"`
	Script Script `json:"script"`
	// "registered" (default): wait until the runtime synchronized it; "rejected": wait until
	// the plugin process exits.
	Expect string `json:"expect"`
}

// ID is the plugin's name in output lines.
func (e *External) ID() string { return e.Idx + "-" + e.Name }

// Script is what a scripted plugin does.
type Script struct {
	// Identity overrides for RegisterPlugin (to send an invalid name or index).
	RegisterName *string `json:"registerName"`
	RegisterIdx  *string `json:"registerIdx"`
	// Holds RegisterPlugin back until the process ends (registration timeout).
	HangRegister bool `json:"hangRegister"`
	// Subscribed events by name; absent: every event but ValidateContainerAdjustment.
	Events []string `json:"events"`
	// Raw ConfigureResponse.events sent on the wire (overrides Events; may be 0 or invalid).
	RawEvents *int32 `json:"rawEvents"`
	// ConfigureResponse.failure_policy (protobuf JSON); absent: not sent.
	FailurePolicy  json.RawMessage `json:"failurePolicy"`
	ConfigureError string          `json:"configureError"`
	// Synchronize behaviour (response is a SynchronizeResponse).
	Synchronize *Action `json:"synchronize"`
	// Per event method: the action for the 1st, 2nd, ... call; the last one repeats.
	On map[string][]Action `json:"on"`
}

// Action is a plugin's behaviour for one request.
type Action struct {
	// Response message in protobuf JSON (the method's response type).
	Response json.RawMessage `json:"response"`
	// Error returned instead of a response, with a ttrpc status code (default 2, UNKNOWN).
	Error string `json:"error"`
	Code  uint32 `json:"code"`
	// Never answer (the request times out at the runtime).
	Hang bool `json:"hang"`
	// Exit the process on receipt, without answering.
	Exit bool `json:"exit"`
	// Answer with bytes that do not decode as the method's response.
	Undecodable bool `json:"undecodable"`
	// Unsolicited UpdateContainers sent (and awaited) before answering.
	UpdateContainers []json.RawMessage `json:"updateContainers"`
}

// Step is one thing the driver does.
type Step struct {
	// A lifecycle event and its request (protobuf JSON of the event's request type).
	Event   string          `json:"event"`
	Request json.RawMessage `json:"request"`
	// Kill an external plugin's process (SIGKILL) and wait until the runtime noticed.
	Kill string `json:"kill"`
	// Ask an external plugin to call UpdateContainers with these updates, outside any event.
	Unsolicited string            `json:"unsolicited"`
	Update      []json.RawMessage `json:"update"`
	// Start another external plugin (same shape as Scenario.Plugins) between events.
	Connect *External `json:"connect"`
}

func loadScenario(path string) (*Scenario, error) {
	buf, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Scenario
	if err := json.Unmarshal(buf, &s); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", path, err)
	}
	return &s, nil
}
