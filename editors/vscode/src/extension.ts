// Starts `policylint server` (a Language Server Protocol server over stdio) for the YAML files of
// the workspace. Everything the editor shows comes from the server: this file only finds the
// command and restarts it when the interpreter setting changes.
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";

let client: LanguageClient | undefined;

function serverOptions(): ServerOptions {
  const interpreter = vscode.workspace.getConfiguration("policylint").get<string>("interpreter", "").trim();
  // The interpreter the user chose runs the module, so that the server is the policylint of that
  // environment (the one `check` runs in the terminal); without one, `policylint` on PATH.
  const command = interpreter !== "" ? interpreter : "policylint";
  const args = interpreter !== "" ? ["-m", "policylint", "server"] : ["server"];
  return { command, args };
}

async function start(context: vscode.ExtensionContext): Promise<void> {
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "yaml" },
      { scheme: "file", pattern: "**/*.json" },
    ],
    synchronize: {
      // Files changed outside the editor (a `git checkout`, a generator) are analysed again.
      fileEvents: vscode.workspace.createFileSystemWatcher("**/*.{yaml,yml,json}"),
    },
  };
  client = new LanguageClient("policylint", "policylint", serverOptions(), clientOptions);
  await client.start();
  context.subscriptions.push({ dispose: () => void client?.stop() });
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.commands.registerCommand("policylint.restart", async () => {
      await client?.stop();
      await start(context);
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("policylint.interpreter")) {
        await client?.stop();
        await start(context);
      }
    }),
  );
  await start(context);
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
