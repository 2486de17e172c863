import { describe, expect, it } from 'vitest';
import { addModelFix, isLocalServer, unreachableFix } from '../../src/cli/doctor/server-advice.js';

describe("doctor's advice for a model server", () => {
  it('counts loopback names and addresses as this machine, and every other host as remote', () => {
    for (const url of [
      'http://localhost:11434/v1',
      'http://127.0.0.1:1234/v1',
      'http://127.1.2.3:8000/v1',
      'http://[::1]:8080/v1',
      'http://0.0.0.0:11434/v1',
    ]) {
      expect(isLocalServer(url), url).toBe(true);
    }
    for (const url of [
      'https://api.openai.com/v1',
      'https://api.openai.com.invalid/v1',
      'http://192.168.1.5:11434/v1',
      'http://localhost.example.com/v1',
    ]) {
      expect(isLocalServer(url), url).toBe(false);
    }
  });

  it('says to start the program a local port belongs to', () => {
    expect(unreachableFix('http://127.0.0.1:11434/v1')).toBe(
      'start Ollama (`ollama serve`), or point OPENAI_BASE_URL or --base-url at a server that runs',
    );
    expect(unreachableFix('http://localhost:1234/v1')).toMatch(/^start LM Studio \(.*`lms server start`\)/);
    expect(unreachableFix('http://localhost:8000/v1')).toMatch(/^start vLLM \(`vllm serve MODEL`\)/);
    expect(unreachableFix('http://localhost:8080/v1')).toMatch(/^start llama\.cpp \(`llama-server/);
    expect(unreachableFix('http://localhost:5050/v1')).toMatch(
      /^start the model server meant to listen on port 5050, /,
    );
  });

  it('says to check the URL and the network for a remote server, and never to start one here', () => {
    expect(unreachableFix('https://api.openai.com/v1')).toBe(
      'check the URL, and that this machine can reach api.openai.com (network, VPN, proxy, firewall)',
    );
    expect(unreachableFix('http://192.168.1.5:11434/v1')).toBe(
      'check the URL, and that this machine can reach 192.168.1.5 (network, VPN, proxy, firewall), and that Ollama runs there',
    );
  });

  it('says how to give each kind of server a model', () => {
    expect(addModelFix('http://127.0.0.1:11434/v1')).toBe('pull one: `ollama pull llama3.2`');
    expect(addModelFix('http://127.0.0.1:11434/v1', 'qwen2.5')).toBe('pull it: `ollama pull qwen2.5`');
    expect(addModelFix('http://127.0.0.1:1234/v1', 'qwen2.5')).toBe(
      'load "qwen2.5" in LM Studio (or `lms load`)',
    );
    expect(addModelFix('http://192.168.1.5:11434/v1')).toBe(
      'pull one: `ollama pull llama3.2` (on 192.168.1.5)',
    );
    expect(addModelFix('http://127.0.0.1:5050/v1', 'qwen2.5')).toBe(
      'load or pull qwen2.5 into the server (Ollama: `ollama pull qwen2.5`; LM Studio: load it in the app)',
    );
    expect(addModelFix('https://api.openai.com/v1')).not.toMatch(/ollama|LM Studio/i);
  });
});
