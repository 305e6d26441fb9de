import { randomInt } from 'node:crypto';

/**
 * `unique_name` (spec 2.1): a human-friendly slug of two words joined by a hyphen, unique in the organization.
 * About 23,000 pairs (148 x 157); when random picks keep colliding (a very large organization), the second word
 * becomes two nouns run together, which keeps the two-word shape and multiplies the space.
 */

const ADJECTIVES = words(
  'able agile amber ample apt arctic azure bold brave breezy bright brisk calm candid careful cheerful civic clever ' +
  'cobalt cosmic crisp curious daring dapper deft eager early earnest easy elated epic even exact fair fancy fast ' +
  'fearless fiery fine firm fleet fluent focused frank fresh friendly frosty gentle giant gifted glad gleaming golden ' +
  'grand green happy hardy hearty helpful honest humble icy ideal jade jolly jovial keen kind lively loyal lucid lucky ' +
  'lunar magic majestic mellow merry mighty mint modest neat nimble noble novel oaken olive optimal orange patient ' +
  'peppy plucky polite precise prime proud quick quiet radiant rapid rare ready regal robust rosy royal ruby rustic ' +
  'sage scarlet serene sharp shiny silent silver simple sleek smart snowy solar solid sonic sparkly speedy spry steady ' +
  'stellar stoic sturdy sunny super swift tame tidy tough tranquil trusty upbeat urban valiant velvet vivid warm ' +
  'wise witty zealous zesty dashing',
);

const NOUNS = words(
  'otter falcon badger heron lynx panda koala beaver bison raven robin sparrow finch eagle hawk owl puffin penguin ' +
  'walrus seal dolphin orca whale shark marlin salmon trout gecko iguana turtle tortoise cobra python viper newt frog ' +
  'toad moose elk deer fawn stag fox wolf coyote jackal hyena lion tiger leopard cheetah jaguar puma cougar ocelot ' +
  'bobcat ferret weasel mink stoat marten mole shrew hedgehog rabbit hare squirrel chipmunk marmot gopher lemur ' +
  'gibbon baboon gorilla llama alpaca camel yak zebra horse pony donkey mule goat sheep ram lamb calf heifer ox ' +
  'buffalo rhino hippo tapir okapi giraffe meerkat mongoose armadillo sloth anteater platypus wombat wallaby kangaroo ' +
  'dingo quokka kiwi emu ostrich condor vulture kestrel osprey kite swift swallow martin wren thrush warbler starling ' +
  'magpie jay crow rook pelican stork crane ibis egret flamingo swan goose duck teal mallard comet meteor nebula ' +
  'quasar pulsar galaxy planet harbor canyon glacier meadow summit river delta lagoon reef island prairie forest',
);

function words(text: string): string[] {
  return [...new Set(text.split(/\s+/))];
}

const pick = (list: string[]) => list[randomInt(list.length)];

export function randomUniqueName(attempt: number): string {
  const second = attempt < 20 ? pick(NOUNS) : pick(NOUNS) + pick(NOUNS);
  return `${pick(ADJECTIVES)}-${second}`;
}

export const UNIQUE_NAME_RE = /^[a-z]+-[a-z]+$/;
