import { describe, expect, it } from 'vitest';
import { outlineTemplate } from '../../src/aipl/outline.js';
import { parseTemplate } from '../../src/aipl/parse.js';

const outline = (source: string) => outlineTemplate(parseTemplate(source));

describe('outlineTemplate', () => {
  it('finds nothing in plain text', () => {
    expect(outline('You are a helpful assistant.')).toEqual({
      updates: 0,
      blocks: 0,
      references: 0,
      reads: [],
      writes: [],
      softFunctions: [],
    });
  });

  it('counts every reference, specials too, and lists the state names read, lower-cased, once each', () => {
    const summary = outline(
      '{char} likes {Mood.Recent:happy} and {{mood.recent}}, not {environment.dangers}.',
    );
    expect(summary.references).toBe(4);
    expect(summary.reads).toEqual(['mood.recent', 'environment.dangers']);
  });

  it('leaves the special names out of what it reads', () => {
    expect(outline('{char} talks to {user} on {date} at {time}.').reads).toEqual([]);
  });

  it('lists the autogram variables a template reads as vars.name, keeping their spelling', () => {
    expect(outline('Topic: {vars.Topic}\n((vars.level > 2\nAdvanced.\n)\n').reads).toEqual([
      'vars.Topic',
      'vars.level',
    ]);
  });

  it('lists what updates write, and what their conditions and questions read', () => {
    const summary = outline(
      [
        '(= "Where did {user} go to school?" -> userInfo.school)',
        '((userInfo.children > 0) ? "What is {char}\'s wife\'s name? ({family.note})" -> userInfo.wifeName)',
      ].join('\n'),
    );
    expect(summary.updates).toBe(2);
    expect(summary.writes).toEqual(['userinfo.school', 'userinfo.wifename']);
    expect(summary.reads).toEqual(['userinfo.children', 'family.note']);
    expect(summary.references).toBe(4);
  });

  it('walks nested blocks, collecting soft functions by their spelling', () => {
    const summary = outline(
      [
        '((isAngryConversation({conversation.summary}) && isCalmCharacter({userInfo.personality})',
        'Only when both hold.',
        '  ((isEvening("The current time is {time}")',
        '    Nested.',
        '    (= "Where did {user} go to school?" -> userInfo.school)',
        '  )',
        ')',
        '((!isEvening("{time}")',
        'Daytime.',
        ')',
      ].join('\n'),
    );
    expect(summary.blocks).toBe(3);
    expect(summary.updates).toBe(1);
    expect(summary.softFunctions).toEqual(['isAngryConversation', 'isCalmCharacter', 'isEvening']);
    // {conversation.summary}, {userInfo.personality}, {time}, {user} and {time} again.
    expect(summary.references).toBe(5);
    expect(summary.reads).toEqual(['conversation.summary', 'userinfo.personality']);
    expect(summary.writes).toEqual(['userinfo.school']);
  });

  it('reads the arguments of soft functions nested in comparisons', () => {
    const summary = outline('((score(deal.notes, "{deal.stage}") >= 3 || deal.closed\nHot lead.\n)\n');
    expect(summary.softFunctions).toEqual(['score']);
    expect(summary.reads).toEqual(['deal.notes', 'deal.stage', 'deal.closed']);
    expect(summary.references).toBe(3);
  });

  it('ignores comments', () => {
    expect(outline('(# {secret.note} isHidden() -> x.y)\nHello.')).toMatchObject({
      references: 0,
      reads: [],
      softFunctions: [],
    });
  });
});
