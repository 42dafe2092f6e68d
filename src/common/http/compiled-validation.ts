import { getMetadataStorage, ValidationArguments, ValidationTypes, ValidatorConstraintInterface } from 'class-validator';

/**
 * The validation pipe's fast path for the DTOs of the hot money routes. class-transformer and class-validator cost
 * more per request than anything else Nest does for those routes, mostly in their machinery (metadata lookups,
 * error objects built for every property, promises), not in the rules themselves. For a DTO marked
 * `@CompiledValidation()` the rules are gathered once from class-validator's own metadata; a request input that is
 * clearly valid (every rule passes, nothing that class-transformer or Nest's pipe would alter or refuse) is turned
 * into the DTO here. Anything else, however slight the doubt, is left to the pipe's usual path, so every answer to
 * bad input — message, order, shape — is the one it always was.
 *
 * The DTO is what the usual path builds: an instance of the class (its fields declared in order, an absent one
 * undefined), each whitelisted field the input's value — nested free JSON copied as class-transformer copies it.
 * test/common/compiled-validation.spec.ts runs both paths over generated inputs and compares.
 */
export function CompiledValidation(): ClassDecorator {
  return (target) => void marked.add(target);
}

/** Deeper than any request of the interface ever needs; the validation pipe refuses input at this depth. */
export const MAX_INPUT_DEPTH = 64;

/** Half of a UTF-16 surrogate pair without the other half (JSON lets `\ud800` through): not text any system can store. */
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The DTO the validation pipe would return for `value`, or undefined when the pipe itself must decide. */
export function compiledDto(value: unknown, metatype: unknown): object | undefined {
  if (typeof metatype !== 'function' || !marked.has(metatype)) return undefined;
  const plan = planOf(metatype as DtoClass);
  if (plan === null || !isPlainRecord(value) || !isUnremarkable(value, 0)) return undefined;
  const dto = new plan.dto() as Record<string, unknown>;
  for (const key of Object.keys(value)) if (plan.fields.has(key)) dto[key] = copyJson(value[key]);
  for (const field of plan.rules) {
    const fieldValue = dto[field.name];
    if (!field.conditions.every((applies) => applies(dto, fieldValue))) continue;
    for (const rule of field.rules) {
      if (rule.validateIf && !rule.validateIf(dto, fieldValue)) continue;
      const args: ValidationArguments = {
        targetName: plan.dto.name,
        property: field.name,
        object: dto,
        value: fieldValue,
        constraints: rule.constraints,
      };
      for (const check of rule.checks) {
        const passed = check.validate(fieldValue, args) as unknown;
        if (passed instanceof Promise || !passed) return undefined;
      }
    }
  }
  return dto;
}

type DtoClass = new () => object;

interface FieldRules {
  name: string;
  /** IsOptional and the like: when one says no, none of the field's rules apply. */
  conditions: Array<(dto: object, value: unknown) => boolean>;
  rules: Array<{
    constraints: unknown[];
    validateIf?: (dto: object, value: unknown) => boolean;
    checks: ValidatorConstraintInterface[];
  }>;
}

interface Plan {
  dto: DtoClass;
  /** Fields the whitelist keeps: those with any validation metadata. */
  fields: Set<string>;
  rules: FieldRules[];
}

const marked = new WeakSet<object>();
const plans = new WeakMap<object, Plan | null>();

function planOf(dto: DtoClass): Plan | null {
  if (!plans.has(dto)) plans.set(dto, compile(dto));
  return plans.get(dto)!;
}

/**
 * The rules of a DTO as the pipe's class-validator call sees them (no groups, `always` off). Null — no fast path —
 * for any feature this path does not reproduce: nested or promised validation, `each`, groups, a field that the
 * class's prototype defines, or a field class-transformer's decorators act on.
 */
function compile(dto: DtoClass): Plan | null {
  const storage = getMetadataStorage();
  const byField = storage.groupByPropertyName(storage.getTargetValidationMetadatas(dto, undefined as never, false, false, undefined));
  const rules: FieldRules[] = [];
  for (const [name, metadatas] of Object.entries(byField)) {
    if (name in dto.prototype || transformerActsOn(dto, name)) return null;
    const field: FieldRules = { name, conditions: [], rules: [] };
    for (const metadata of metadatas) {
      if (metadata.each || (metadata.groups?.length ?? 0) > 0) return null;
      if (metadata.type === ValidationTypes.CONDITIONAL_VALIDATION) field.conditions.push(metadata.constraints[0]);
      else if (metadata.type === ValidationTypes.CUSTOM_VALIDATION) {
        const checks = storage.getTargetValidatorConstraints(metadata.constraintCls).map((constraint) => constraint.instance);
        field.rules.push({ constraints: metadata.constraints, validateIf: metadata.validateIf, checks });
      } else if (metadata.type !== ValidationTypes.WHITELIST) return null;
    }
    rules.push(field);
  }
  if (rules.length === 0) return null;
  return { dto, fields: new Set(rules.map((r) => r.name)), rules };
}

/** class-transformer's own decorators (Type, Transform, Expose, Exclude) would change what the DTO receives. */
function transformerActsOn(dto: DtoClass, field: string): boolean {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { defaultMetadataStorage: storage } = require('class-transformer/cjs/storage') as { defaultMetadataStorage: TransformerStorage };
  return (
    storage.getStrategy(dto) !== 'none' ||
    storage.findTypeMetadata(dto, field) !== undefined ||
    storage.findTransformMetadatas(dto, field, 0).length > 0 ||
    storage.findExposeMetadataByCustomName(dto, field) !== undefined ||
    storage.findExcludeMetadata(dto, field) !== undefined
  );
}

interface TransformerStorage {
  getStrategy(target: object): string;
  findTypeMetadata(target: object, field: string): unknown;
  findTransformMetadatas(target: object, field: string, transformationType: number): unknown[];
  findExposeMetadataByCustomName(target: object, name: string): unknown;
  findExcludeMetadata(target: object, field: string): unknown;
}

/**
 * What JSON.parse or Fastify's query string parser makes: a record with no class of its own (the latter's
 * prototype is an empty object without a prototype).
 */
function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null || (Object.getPrototypeOf(proto) === null && Reflect.ownKeys(proto).length === 0);
}

/**
 * Nothing the usual path would refuse before the rules (NUL characters, lone surrogates, input MAX_INPUT_DEPTH deep:
 * SafeInputValidationPipe) or would alter while copying (keys Nest strips or class-transformer skips: `__proto__`,
 * `constructor`, `prototype`, any name Object.prototype has; values JSON cannot hold).
 */
function isUnremarkable(value: unknown, depth: number): boolean {
  if (typeof value === 'string') return !value.includes('\u0000') && !LONE_SURROGATE.test(value);
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return true;
  if (typeof value !== 'object' || depth >= MAX_INPUT_DEPTH) return false;
  if (Array.isArray(value)) return value.every((item) => isUnremarkable(item, depth + 1));
  if (depth > 0 && Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const key of Object.keys(value)) {
    if (key in Object.prototype || key === 'prototype' || !isUnremarkable(key, depth)) return false;
    if (!isUnremarkable((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

/** class-transformer's copy of plain JSON: new arrays and objects all the way down, other values as they are. */
function copyJson(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(copyJson);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) copy[key] = copyJson((value as Record<string, unknown>)[key]);
  return copy;
}
