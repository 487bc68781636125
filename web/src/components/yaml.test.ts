import { describe, expect, it } from 'vitest';
import { fieldPath, lineOfField, parseYaml, toYaml } from './yaml';

const text = `apiVersion: batch/v1
kind: Job
metadata:
  name: pi
  labels:
    app.kubernetes.io/name: pi
spec:
  backoffLimit: -1
  template:
    spec:
      containers:
        - name: pi
          image: perl
        - name: side
          image: ""
`;

describe('fieldPath', () => {
  it('splits dotted paths, indexes, quoted keys and name selectors', () => {
    expect(fieldPath('spec.template.spec.containers[1].image')).toEqual(['spec', 'template', 'spec', 'containers', 1, 'image']);
    expect(fieldPath("metadata.labels['app.kubernetes.io/name']")).toEqual(['metadata', 'labels', 'app.kubernetes.io/name']);
    expect(fieldPath('spec.containers[name=side].image')).toEqual(['spec', 'containers', 'name=side', 'image']);
  });
});

describe('lineOfField', () => {
  it('finds the line of the field a server error names', () => {
    expect(lineOfField(text, 'spec.backoffLimit')).toBe(8);
    expect(lineOfField(text, 'spec.template.spec.containers[1].image')).toBe(15);
    expect(lineOfField(text, "metadata.labels['app.kubernetes.io/name']")).toBe(6);
    expect(lineOfField(text, 'spec.template.spec.containers[name=side].image')).toBe(15);
  });
  it('points a missing field at its nearest parent', () => {
    expect(lineOfField(text, 'spec.template.spec.restartPolicy')).toBe(10);
    expect(lineOfField(text, 'status.x')).toBe(1);
  });
});

describe('parseYaml', () => {
  it('names the line of a syntax error', () => {
    const r = parseYaml('a: 1\nb: [1, 2\nc: 3\n');
    expect(r.value).toBeUndefined();
    expect(r.problems[0]?.line).toBeGreaterThanOrEqual(2);
  });
  it('round-trips an object', () => {
    const o = { a: { b: [1, 'x'] } };
    expect(parseYaml(toYaml(o)).value).toEqual(o);
  });
});
