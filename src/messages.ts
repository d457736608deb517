/**
 * The localised sentences about the screen shared by the status bar, the Screen view and the
 * notifications: problems, states, placement, where the extension host runs, who has control.
 * Sentences used by one command or tool live with it.
 */
import * as vscode from 'vscode';
import type { Placement } from './core/placement';
import type { RecordingSummary } from './core/recorderStore';
import type { StartQuestion } from './core/consent';
import { problemSetting, type Problem } from './core/problem';
import type { FixStrings } from './fixes';
import type { ScreenState, ViewStrings } from './protocol';
import type { StatusWords } from './statusView';


export function problemMessage(problem: Problem): string {
  switch (problem.code) {
    case 'refused':
      return vscode.l10n.t(
        'The sandbox backend is {0}, which cannot host a screen yet. Putting the screen {1} would leave the browser and desktop outside the sandbox; set "botScreen.placement": "gateway" to allow that explicitly.',
        problem.backend,
        hostPlace(),
      );
    case 'cliMissing':
      return vscode.l10n.t('The program "{0}" was not found {1}. Install it, or set "{2}" to its full path.', problem.cli, hostPlace(), problem.setting);
    case 'daemonDown':
      return vscode.l10n.t('The Docker daemon behind "{0}" is not running {1} ({2}). Start it (for example "sudo systemctl start docker", or "dockerd" as root) and try again.', problem.cli, hostPlace(), firstLine(problem.detail));
    case 'badImage':
      return vscode.l10n.t('"{0}" is not a valid image name (check "{1}"). Nothing was run.', problem.image, problem.setting);
    case 'badGeometry':
      return vscode.l10n.t('"{0}" is not a screen size: "botScreen.screen.geometry" must look like 1280x800 (each side 320 to 8192). Nothing was run.', problem.geometry);
    case 'badContainer':
      return vscode.l10n.t('"{0}" is not a valid container name (check "{1}"). Nothing was run.', problem.container, problem.setting);
    case 'imageUnavailable':
      return problem.keptContainer
        ? vscode.l10n.t('The image {0} is not available and could not be pulled ({1}). The current sandbox container was kept as it is.', problem.image, problem.detail)
        : vscode.l10n.t('The sandbox image {0} is not available and could not be pulled ({1}). Build it (Bot Screen: Build Sandbox Image), or set "{2}" to an image you have, then start again.', problem.image, problem.detail, problem.setting);
    case 'imageMissing':
      return problem.buildable
        ? vscode.l10n.t('The sandbox image {0} is not built yet. Run "Bot Screen: Build Sandbox Image" ({1}), then start again.', problem.image, imageBuildCost())
        : vscode.l10n.t('The sandbox image {0} was built by another version of Bot Screen and is gone. Clear "botScreen.sandbox.docker.image" to use this version\'s image, then start again.', problem.image);
    case 'containerNotRunning':
      return vscode.l10n.t('The container {0} named in "{1}" is not running. Bot Screen never starts or recreates a container it does not own: start it yourself, then start the screen.', problem.container, problem.setting);
    case 'missingBinaries':
      if (problem.onHost) {
        return vscode.l10n.t('The screen needs {0}, which {1} lacks. Install the desktop packages (TigerVNC and Xfce) to run the screen there.', problem.names.join(', '), hostName());
      }
      return problem.setting
        ? vscode.l10n.t('The sandbox lacks {0}, which the screen needs. Give it the desktop image ("{1}"; Build Image makes it), or set "botScreen.placement": "gateway".', problem.names.join(', '), problem.setting)
        : vscode.l10n.t('The sandbox lacks {0}, which the screen needs. Install TigerVNC, Xfce and python3 in it, or set "botScreen.placement": "gateway".', problem.names.join(', '));
    case 'startTimeout':
      return vscode.l10n.t('The screen did not come up in time and was stopped. The launcher\'s log is in the Bot Screen log (Show Logs).');
    case 'sandboxGone':
      return sandboxGoneMessage();
    case 'desktopStopped':
      return vscode.l10n.t('The desktop in the sandbox stopped (its VNC server ended); the sandbox is still there. Start the screen again to bring the desktop back in it.');
    case 'sandboxUnknown':
      return vscode.l10n.t('Could not tell whether the sandbox {0} hosting this screen is still there (the CLI did not answer). Its state is unknown; try again.', problem.name);
    case 'notRunning':
      return vscode.l10n.t('The screen is not running. Start it first.');
    case 'commandFailed':
      return vscode.l10n.t('{0} failed: {1}', problem.what, problem.detail);
    case 'badHost':
      return problem.setting
        ? vscode.l10n.t('"{0}" is not a host name (check "{1}"): it must not be empty or start with "-", and may hold only letters, digits and . _ : % -. Nothing was run.', problem.host, problem.setting)
        : vscode.l10n.t('"{0}" is not a host name: it must not be empty or start with "-", and may hold only letters, digits and . _ : % -. Nothing was run.', problem.host);
    case 'badSshUser':
      return vscode.l10n.t('"{0}" is not a usable SSH user name (check "botScreen.sandbox.ssh.user"). Nothing was run.', problem.user);
    case 'badPort':
      return problem.setting
        ? vscode.l10n.t('"{0}" is not a port number between 1 and 65535 (check "{1}"). Nothing was run.', problem.port, problem.setting)
        : vscode.l10n.t('"{0}" is not a port number between 1 and 65535. Nothing was run.', problem.port);
    case 'badIdentityFile':
      return vscode.l10n.t('The SSH identity file "{0}" is not an absolute path to a readable file (check "botScreen.sandbox.ssh.identityFile"). Nothing was run.', problem.path);
    case 'unsafeControlDir':
      return vscode.l10n.t('The SSH control socket directory {0} is not private to you (it must be yours and mode 0700). Remove it and try again.', problem.path);
    case 'sshFailed':
      return vscode.l10n.t('Could not log in to {0} over SSH from {1}: {2}', problem.host, hostName(), problem.detail);
    case 'badInstance':
      return vscode.l10n.t('"{0}" is not a valid Apptainer instance name (check "botScreen.sandbox.apptainer.instance"). Nothing was run.', problem.instance);
    case 'badKubeName':
      return vscode.l10n.t('"{1}" is not a valid Kubernetes {0} name (check "{2}"). Nothing was run.', problem.kind, problem.value, problemSetting(problem) ?? '');
    case 'podNotSet':
      return vscode.l10n.t('Set "botScreen.sandbox.kubernetes.pod" to the pod the agent\'s terminal runs in; Bot Screen never creates pods.');
    case 'podNotFound':
      return problem.namespace
        ? vscode.l10n.t('The pod {0} was not found in namespace {1}. Bot Screen never creates pods: check "botScreen.sandbox.kubernetes.pod".', problem.pod, problem.namespace)
        : vscode.l10n.t('The pod {0} was not found in the context\'s namespace. Bot Screen never creates pods: check "botScreen.sandbox.kubernetes.pod".', problem.pod);
    case 'podNotRunning':
      return vscode.l10n.t('The pod {0} is {1}, not Running. Start it, then start the screen.', problem.pod, problem.phase);
    case 'untrusted':
      return vscode.l10n.t('This workspace is in Restricted Mode, where Bot Screen runs nothing. Trust the workspace ("Workspaces: Manage Workspace Trust") to use the screen; an agent must ask the user to do so.');
    case 'needsConsent':
      return consentMessage(problem.question, problem.declined);
  }
}

/**
 * What a build of the sandbox image costs: the built image measured about 940 MB; an uncached
 * build took under 2 minutes on a fast mirror, longer on slow networks.
 */
export function imageBuildCost(): string {
  return vscode.l10n.t('about 1 GB of disk, typically 2 to 10 minutes depending on the network');
}

/** A start that waits for a person's yes: for an agent, a refusal that tells it to ask the user. */
function consentMessage(question: StartQuestion, declined: boolean): string {
  if (declined) {
    return question.kind === 'replaceContainer'
      ? vscode.l10n.t('The screen was not started: replacing the container {0} was not confirmed.', question.container)
      : vscode.l10n.t('The screen was not started: running it on {0} was not confirmed.', question.host);
  }
  return question.kind === 'replaceContainer'
    ? vscode.l10n.t(
        'The screen needs the user\'s confirmation before it replaces the sandbox container {0} (image {1}) with one of the image {2} that the workspace settings ask for; nothing was changed. Ask the user to run "Bot Screen: Start Screen".',
        question.container,
        question.currentImage,
        question.image,
      )
    : vscode.l10n.t(
        'The screen needs the user\'s confirmation before it runs on the SSH host {0}, which the workspace settings name and the user has not approved; nothing was run there. Ask the user to run "Bot Screen: Start Screen".',
        question.host,
      );
}

/**
 * Where the extension host runs, seen from the user: with VS Code's remote support that is the
 * SSH host, the dev container, WSL... and "this machine" would mislead. `place` is an adverbial
 * ("on the SSH host"), `name` a noun inside a sentence, `short` a word or two for the status bar.
 */
function hostWords(): { readonly place: string; readonly name: string; readonly short: string } {
  const remote = vscode.env.remoteName ?? '';
  switch (remoteKind()) {
    case 'local':
      return { place: vscode.l10n.t('on this machine'), name: vscode.l10n.t('this machine'), short: vscode.l10n.t('this machine') };
    case 'ssh':
      return { place: vscode.l10n.t('on the SSH host'), name: vscode.l10n.t('the SSH host'), short: vscode.l10n.t('SSH host') };
    case 'container':
      return { place: vscode.l10n.t('in the dev container'), name: vscode.l10n.t('the dev container'), short: vscode.l10n.t('dev container') };
    case 'wsl':
      return { place: vscode.l10n.t('in WSL'), name: vscode.l10n.t('WSL'), short: vscode.l10n.t('WSL') };
    case 'codespace':
      return { place: vscode.l10n.t('in the codespace'), name: vscode.l10n.t('the codespace'), short: vscode.l10n.t('codespace') };
    case 'tunnel':
      return { place: vscode.l10n.t('on the tunnel\'s machine'), name: vscode.l10n.t('the tunnel\'s machine'), short: vscode.l10n.t('tunnel host') };
    case 'server':
      return { place: vscode.l10n.t('on the VS Code server ({0})', remote), name: vscode.l10n.t('the VS Code server ({0})', remote), short: vscode.l10n.t('VS Code server') };
    case 'other':
      return { place: vscode.l10n.t('on the remote machine ({0})', remote), name: vscode.l10n.t('the remote machine ({0})', remote), short: vscode.l10n.t('remote host') };
  }
}

export const hostPlace = (): string => hostWords().place;
export const hostName = (): string => hostWords().name;
export const hostShortName = (): string => hostWords().short;

function remoteKind(): 'local' | 'ssh' | 'container' | 'wsl' | 'codespace' | 'tunnel' | 'server' | 'other' {
  const name = vscode.env.remoteName;
  switch (name) {
    case undefined:
      return 'local';
    case 'ssh-remote':
      return 'ssh';
    case 'dev-container':
    case 'attached-container':
    case 'k8s-container':
      return 'container';
    case 'wsl':
      return 'wsl';
    case 'codespaces':
      return 'codespace';
    case 'tunnel':
      return 'tunnel';
    default:
      // A served VS Code (code serve-web, a VS Code Server opened in a browser) names its
      // remote by the server's own address.
      return /^[^+]*:\d+$/.test(name) ? 'server' : 'other';
  }
}

export function sandboxGoneMessage(): string {
  return vscode.l10n.t('The sandbox hosting this screen is gone; start it again.');
}

export function placementHeadline(placement: Placement | undefined): string {
  if (!placement) {
    return vscode.l10n.t('The screen cannot run: the sandbox backend setting is not a known backend.');
  }
  switch (placement.where) {
    case 'sandbox':
      return vscode.l10n.t('Screen runs inside the {0} sandbox, with the terminal.', placement.backend);
    case 'host':
      return placement.why === 'localBackend'
        ? vscode.l10n.t('Screen runs {0}, where the terminal runs.', hostPlace())
        : vscode.l10n.t('Screen runs {0} (placement: gateway), outside the {1} sandbox.', hostPlace(), placement.backend);
    case 'refused':
      return vscode.l10n.t('Screen refused: the {0} backend cannot host one.', placement.backend);
  }
}

export function stateLabel(state: ScreenState): string {
  switch (state) {
    case 'stopped':
      return vscode.l10n.t('stopped');
    case 'starting':
      return vscode.l10n.t('starting');
    case 'running':
      return vscode.l10n.t('running');
    case 'stopping':
      return vscode.l10n.t('stopping');
    case 'gone':
      return vscode.l10n.t('sandbox gone');
    case 'refused':
      return vscode.l10n.t('refused');
    case 'blocked':
      return vscode.l10n.t('blocked');
    case 'error':
      return vscode.l10n.t('error');
  }
}

/** The labels of the buttons that fix a problem. */
export function fixStrings(): FixStrings {
  return {
    openSettings: vscode.l10n.t('Open Settings'),
    retry: vscode.l10n.t('Retry'),
    buildImage: vscode.l10n.t('Build Image'),
    startDocker: vscode.l10n.t('Start Docker'),
    installDocker: vscode.l10n.t('Install Docker'),
    allowHost: vscode.l10n.t('Allow on this machine…'),
    installHostDesktop: vscode.l10n.t('Install Desktop'),
    manageTrust: vscode.l10n.t('Manage Workspace Trust'),
    showLogs: vscode.l10n.t('Show Logs'),
  };
}

export function viewStrings(): ViewStrings {
  const fixes = fixStrings();
  return {
    openSettings: fixes.openSettings,
    buildImage: fixes.buildImage,
    startDocker: fixes.startDocker,
    installDocker: fixes.installDocker,
    allowHost: fixes.allowHost,
    manageTrust: fixes.manageTrust,
    start: vscode.l10n.t('Start'),
    stop: vscode.l10n.t('Stop'),
    openInEditor: vscode.l10n.t('Open in Editor'),
    installHostDesktop: vscode.l10n.t('Install desktop on this machine'),
    showLogs: vscode.l10n.t('Show Logs'),
    switchImage: vscode.l10n.t('Switch image'),
    keepImage: vscode.l10n.t('Keep current image'),
    takeControl: vscode.l10n.t('Take control'),
    handBack: vscode.l10n.t('Hand back'),
    releaseKeyboard: vscode.l10n.t('Release keyboard'),
    keyboardCaptured: vscode.l10n.t('Keys go to the screen. Release with Ctrl+Alt+Shift+K.'),
    keyboardReleased: vscode.l10n.t('Keys go to VS Code again.'),
    // The placeholders stay for the webview to fill (webview/a11y.ts).
    screenLabel: vscode.l10n.t('Sandbox screen ({0}). {1}', '{0}', '{1}'),
    connecting: vscode.l10n.t('connecting'),
    live: vscode.l10n.t('live'),
    connectionInfo: vscode.l10n.t('Connection info'),
    notConnected: vscode.l10n.t('not connected'),
    disconnected: vscode.l10n.t('disconnected'),
    statConnection: vscode.l10n.t('Connection'),
    statQuality: vscode.l10n.t('JPEG quality / compression level'),
    statFrameRate: vscode.l10n.t('Frames drawn per second'),
    statRate: vscode.l10n.t('Received (MB/s)'),
    statTotal: vscode.l10n.t('Received in total (MB)'),
    statFirstFrame: vscode.l10n.t('Connect to first frame (ms)'),
    statLastFrame: vscode.l10n.t('Since the last frame (s)'),
    statReconnects: vscode.l10n.t('Reconnects'),
    statTransport: vscode.l10n.t('Transport'),
    transportDirect: vscode.l10n.t('Direct socket'),
    transportMessages: vscode.l10n.t('VS Code messages'),
    reconnecting: vscode.l10n.t('Reconnecting… (attempt {0})'),
    stalled: vscode.l10n.t('No data for {0} s'),
  };
}

/** The localised sentences of the Screen view's status (src/statusView.ts decides what shows). */
export function statusWords(): StatusWords {
  return { problem: problemMessage, state: stateLabel, headline: placementHeadline, imageSwitch: imageSwitchMessage };
}

function firstLine(text: string): string {
  return text.split('\n')[0].slice(0, 300);
}

export function imageSwitchMessage(current: string, target: string): string {
  return vscode.l10n.t(
    'The sandbox container still runs {0}; the default image is now {1}. Switching recreates the container from {1}: folders mounted into it stay, packages installed inside the container do not. Keeping pins {0}.',
    current,
    target,
  );
}

/** How many viewers watch the screen (in every window, external VNC viewers included). */
export function viewersLabel(count: number): string {
  return count === 1 ? vscode.l10n.t('1 viewer connected') : vscode.l10n.t('{0} viewers connected', count);
}

/** A recording's time span and size, as the lists of recordings show it ("1.12.2026, 21:03:10 – 21:15:42, 12.3 MB"). */
export function recordingSpan(summary: RecordingSummary): string {
  const mb = (summary.bytes / 1024 / 1024).toFixed(1);
  return vscode.l10n.t('{0} – {1}, {2} MB', new Date(summary.startedAt).toLocaleString(), new Date(summary.updatedAt).toLocaleTimeString(), mb);
}

/** Who holds control, from one viewer's point of view. */
export function controlLabel(holder: 'agent' | 'human', mine: boolean, unreadable: boolean): string {
  if (unreadable) {
    return vscode.l10n.t('Control: unknown (the lease file is unreadable), so nobody acts; Take control repairs it.');
  }
  if (holder === 'agent') {
    return vscode.l10n.t('The agent has control: this view is view-only.');
  }
  return mine
    ? vscode.l10n.t('You have control: your keyboard and mouse reach the screen; the agent waits.')
    : vscode.l10n.t('Another viewer has control: this view is view-only.');
}
