export * from './errors.ts';
export * from './finish-reason.ts';
export * from './request.ts';
export * from './response.ts';
export * from './stream.ts';
export * from './usage.ts';
export * from './warnings.ts';
